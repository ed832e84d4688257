// People as the issuer sees them: sign-in with a login account, and the facts every token issuance re-reads
// (account status and epoch, session revocation, the tenant relationship), so refreshed tokens carry current claims.
import type { Knex } from 'knex';
import { HashingBusy, SIGN_IN_HASHING, hashSecret, verifySecret } from '../common/secrets.js';
import { fixedStatement, storableText } from '../common/db.js';
import { waitMessage, type CredentialThrottle } from '../common/credential-throttle.js';
import { foldUsername } from '../common/usernames.js';
import { done, refused, type Outcome, type Refusal } from '../wire/outcome.js';
import type { Capability } from '../wire/decision.js';
import { allowedCapabilitiesColumn, inCatalogueOrder } from './scope-policy.js';

let dummyHash: Promise<string> | undefined;
/** Hash checked when the username is unknown, so a wrong username costs as long as a wrong password. */
const timingDummy = () => (dummyHash ??= hashSecret('no-such-account'));

/** Tenants whose accounts a sign-in without a tenant (connected apps) tries under one username, at most. */
const MAX_TENANTS_PER_USERNAME = 5;

type LoginRow = {
  tenant_id: string;
  username: string;
  person_id: string | null;
  status: string;
  password_hash: string;
};

/**
 * The accounts a typed username names, at most one per tenant: the one whose folded name it folds to (any case), or,
 * where an account is spelled exactly as typed, that one. Only an account whose name collided with an older one's
 * when usernames were folded (migration 010) has no folded name: it answers to its exact spelling alone.
 */
async function accountsNamed(knex: Knex, username: string, tenantId: string | undefined): Promise<LoginRow[]> {
  if (!storableText(username)) return [];
  const rows: LoginRow[] = await knex('accounts')
    .where({ kind: 'person', ...(tenantId !== undefined && { tenant_id: tenantId }) })
    .andWhere((q) =>
      q
        .where('username_folded', foldUsername(username))
        .orWhere((exact) => exact.whereNull('username_folded').andWhere('username', username)),
    )
    .orderBy('created_at')
    .limit(2 * MAX_TENANTS_PER_USERNAME)
    .select('tenant_id', 'username', 'person_id', 'status', 'password_hash');
  const spelledExactly = new Set(rows.filter((r) => r.username === username).map((r) => r.tenant_id));
  return rows
    .filter((r) => r.username === username || !spelledExactly.has(r.tenant_id))
    .slice(0, MAX_TENANTS_PER_USERNAME);
}

/**
 * The personId (psn_…) when username/password belong to an active person login account; undefined otherwise, without
 * saying which part failed. Usernames are unique per tenant in any case: with `tenantId` (the authorize step) only
 * that tenant's account is tried; without it (connected apps) each tenant's account by that name, and the sign-in
 * succeeds only when exactly one person's password matches.
 */
async function checkPersonLogin(
  knex: Knex,
  username: string,
  password: string,
  tenantId: string | undefined,
): Promise<string | undefined> {
  const accounts = await accountsNamed(knex, username, tenantId);
  if (!accounts.length) {
    await verifySecret(password, await timingDummy(), SIGN_IN_HASHING);
    return undefined;
  }
  const matched = new Set<string>();
  for (const account of accounts) {
    const passwordOk = await verifySecret(password, account.password_hash, SIGN_IN_HASHING);
    if (passwordOk && account.status === 'active' && account.person_id) matched.add(account.person_id);
  }
  return matched.size === 1 ? [...matched][0] : undefined;
}

export interface SignInAttempt {
  username: string;
  password: string;
  /** The client's address (brute-force budget per address). */
  address: string;
  /** The authorize step's tenant: the person must have a current relationship with it. */
  tenantId?: string | undefined;
}
/**
 * The person signed in, or why not: `forbidden` (wrong details, one answer for every cause), `rate_limited` (past the
 * failure budget) or `authorization_unavailable` (the sign-in hashing lane is full; not counted as a failure), the
 * last two with how long to wait.
 */
export type SignInResult = Outcome<string, 'forbidden' | 'rate_limited' | 'authorization_unavailable'>;

/** One message for every failed sign-in (unknown user, wrong password, disabled account, no relationship). */
const SIGN_IN_FAILED = 'Those sign-in details did not work. Check your username and password and try again.';

/**
 * How a sign-in form answers a refusal: the status, whether to wait (retry-after) and the page's message; a throttled
 * attempt is told to wait whatever the username.
 */
export function signInRefusal(result: Refusal<'forbidden' | 'rate_limited' | 'authorization_unavailable'>) {
  if (result.error === 'forbidden') return { status: 401, message: SIGN_IN_FAILED };
  const retryAfterS = result.retryAfterS ?? 1;
  const headers = { 'retry-after': String(retryAfterS) };
  return result.error === 'authorization_unavailable'
    ? { status: 503, message: 'Signing in is busy just now. Try again in a few seconds.', headers }
    : { status: 429, message: waitMessage(retryAfterS), headers };
}

/**
 * The one credential check of every sign-in form (authorize step, connected apps), throttled: past the failure budget
 * of the username or the address the answer is "wait", before any hash is computed and whether or not the username
 * exists (common/credential-throttle.ts).
 */
export async function signIn(knex: Knex, throttle: CredentialThrottle, attempt: SignInAttempt): Promise<SignInResult> {
  const { username, password, address, tenantId } = attempt;
  // The failure budget is the name's, whatever case each attempt types it in.
  const budgetName = foldUsername(username);
  const retryAfterS = await throttle.waitSeconds(budgetName, address);
  if (retryAfterS !== undefined) return refused('rate_limited', 'past the failure budget', retryAfterS);
  let personId: string | undefined;
  try {
    personId = username && password ? await checkPersonLogin(knex, username, password, tenantId) : undefined;
  } catch (err) {
    if (err instanceof HashingBusy)
      return refused('authorization_unavailable', 'the sign-in hashing lane is full', err.retryAfterS);
    throw err;
  }
  if (!personId || (tenantId !== undefined && !(await hasRelationship(knex, tenantId, personId)))) {
    await throttle.failed(budgetName || undefined, address);
    return refused('forbidden');
  }
  await throttle.succeeded(budgetName);
  return done(personId);
}

const relationship = fixedStatement<[string, string]>((knex, tenantId, personId) =>
  knex('tenant_person_relationships')
    .where({ tenant_id: tenantId, person_id: personId })
    .whereNull('ended_at')
    .first('person_id'),
);

export async function hasRelationship(knex: Knex, tenantId: string, personId: string): Promise<boolean> {
  const { rows } = await relationship(knex, tenantId, personId);
  return rows.length > 0;
}

export interface LoginAccount {
  id: string;
  epoch: number;
  status: string;
}

/**
 * The person's login account; should a person ever have several, the one created in this tenant wins, then the oldest.
 */
export async function loginAccountOf(
  knex: Knex,
  personId: string,
  tenantId: string | undefined,
): Promise<LoginAccount | undefined> {
  const q = knex('accounts').where({ person_id: personId, kind: 'person' });
  if (tenantId) q.orderByRaw('(tenant_id = ?) desc', [tenantId]);
  return q.orderBy('created_at').first('id', 'epoch', 'status');
}

const clientTenant = fixedStatement<[string], { tenant_id: string }>((knex, clientId) =>
  knex('clients').where('id', clientId).first('tenant_id'),
);

export async function tenantOfClient(knex: Knex, clientId: string): Promise<string | undefined> {
  const { rows } = await clientTenant(knex, clientId);
  return rows[0]?.tenant_id;
}

export interface SessionActor {
  accountId: string;
  personId: string;
  epoch: number;
  accountActive: boolean;
  revoked: boolean;
  /** The tenant of the client asking; undefined when no such client. */
  tenantId: string | undefined;
  /** Whether the person has a current relationship with that tenant. */
  related: boolean;
  /** What the client may be given (scope-policy.ts allowedCapabilities), read in the same statement. */
  clientAllows: Capability[];
}

/**
 * The account behind a consented authorization (sessions.id = grant id) as it is now, with the tenant of the client
 * asking and whether the person is still related to it: every fact a refresh checks about its actor, in one statement.
 */
const grantActor = fixedStatement<
  [string, string],
  {
    id: string;
    person_id: string;
    epoch: number | string;
    status: string;
    revoked_at: Date | null;
    tenant_id: string | null;
    related: boolean;
    allowed: string[];
  }
>((knex, grantId, clientId) => {
  const related = knex('tenant_person_relationships as r')
    .whereRaw('r.tenant_id = c.tenant_id and r.person_id = a.person_id')
    .whereNull('r.ended_at')
    .select(knex.raw('1'));
  return knex('sessions as s')
    .join('accounts as a', 'a.id', 's.account_id')
    .leftJoin('clients as c', (j) => void j.on('c.id', '=', knex.raw('?', [clientId])))
    .where('s.id', grantId)
    .first(
      'a.id',
      'a.person_id',
      'a.epoch',
      'a.status',
      's.revoked_at',
      'c.tenant_id',
      knex.raw('exists (?) as related', [related]),
      allowedCapabilitiesColumn(knex, clientId),
    );
});

export async function actorOfGrant(knex: Knex, grantId: string, clientId: string): Promise<SessionActor | undefined> {
  const {
    rows: [row],
  } = await grantActor(knex, grantId, clientId);
  if (!row) return undefined;
  return {
    accountId: row.id,
    personId: row.person_id,
    epoch: Number(row.epoch),
    accountActive: row.status === 'active',
    revoked: row.revoked_at !== null,
    tenantId: row.tenant_id ?? undefined,
    related: row.related,
    clientAllows: inCatalogueOrder(row.allowed),
  };
}
