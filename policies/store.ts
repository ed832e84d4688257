// Everything one decision needs, from memory kept at the database's current revision (issue 33): each batch first
// reads the revision and the changes since the one held (one small statement), evicts what they name, and reads from
// the database only the inputs whose facts are not held. A change acknowledged before a decision was asked for has
// committed before that decision's revision is read, so it is never decided without (docs/decisions.md).
import type { Knex } from 'knex';
import { performance } from 'node:perf_hooks';
import { preparedQuery } from '../common/db.js';
import { isId } from '../common/ids.js';
import type { RevisionFeed, RevisionMark } from '../common/revision-feed.js';
import type { Capability, DecisionInput, RateLimitPolicy } from '../wire/decision.js';
import { FactCache, DEFAULT_FACT_ENTRIES } from './fact-cache.js';

export interface CatalogueEntry {
  id: Capability;
  resource_type: string;
  min_plan_level: number;
  enabled: boolean;
}

type ClientFact = { tenant_id: string; kind: string; status: string };
type TenantFact = { id: string; status: string; plan_level: number; rate_limit: RateLimitPolicy | null };
type AccountFact = {
  id: string;
  tenant_id: string;
  kind: string;
  status: string;
  epoch: number;
  person_id: string | null;
  client_id: string | null;
};
type SessionFact = { account_id: string; client_id: string; revoked: boolean };

export interface DecisionFacts {
  client: ClientFact | null;
  tenant: TenantFact | null;
  account: AccountFact | null;
  session: SessionFact | null;
  granted: Capability[];
  accountCapabilities: Capability[];
  catalogue: CatalogueEntry[];
  /** The addressed person (if any) has a live relationship with the token's tenant. */
  relationship: boolean;
  /** The addressed person has a live relationship with some other tenant. */
  personOfOtherTenant: boolean;
  /** The token's subject has a live relationship with the token's tenant (meaningful for self tokens). */
  subjectRelationship: boolean;
}

export interface PolicyStore {
  facts(input: DecisionInput): Promise<DecisionFacts>;
}

export interface PolicyStoreOptions {
  /** Facts kept in memory at most (PDP_FACT_CACHE_ENTRIES). */
  maxFacts?: number;
  /** Where the revisions that writers commit are published; without one, every batch reads the database's. */
  feed?: RevisionFeed | undefined;
}

/**
 * The feed vouches for the facts held when it shows this token and no revision above this one: the database's reading
 * that gave `revision` was sent at `sentAt`, after the feed was seen with `token`.
 */
interface FeedTrust {
  token: string;
  revision: number;
  sentAt: number;
}

/** A PDP further behind than this reads its facts afresh rather than the changes it missed. */
const MAX_CATCH_UP = 1000;

/**
 * The current revision and the facts changed since `$1`, in one snapshot. The list is complete when it holds
 * revision − $1 entries (revisions are consecutive, one change each); it is left empty when too long to be worth it.
 */
const REVISION_SQL =
  "select p.revision::text as revision, (select coalesce(json_agg(c.fact), '[]') from pdp_changes c " +
  `where c.revision > $1 and p.revision - $1 <= ${MAX_CATCH_UP}) as changed from pdp_revision p`;

/** The facts of the inputs not held, one row per input in input order (the function pdp_fact_rows, migration 011). */
const FACT_ROWS_SQL = 'select * from pdp_fact_rows($1, $2, $3, $4, $5, $6)';

/** Most inputs one fact-rows statement carries; more go out as several statements at once. */
const MAX_BATCH = 64;

interface Pending {
  input: DecisionInput;
  resolve(facts: DecisionFacts): void;
  reject(err: unknown): void;
}

/** The names (as the change log spells them) of the facts a decision reads, from the input's ids. */
function factNames({ token, resource }: DecisionInput) {
  // A personId that is not one cannot name a person: looked up as none (and never sent to SQL as odd text).
  const personId = isId('psn', resource.personId) ? resource.personId : null;
  return {
    client: `client:${token.client_id}`,
    tenant: `tenant:${token.tenant_id}`,
    account: token.actor_account_id ? `account:${token.actor_account_id}` : null,
    session: token.sid ? `session:${token.sid}` : null,
    app: `app:${token.tenant_id}:${token.client_id}`,
    person: personId ? `person:${personId}` : null,
    subject: `person:${token.sub}`,
    catalogue: 'catalogue',
    ids: [token.client_id, token.tenant_id, token.actor_account_id ?? null, token.sid ?? null, personId, token.sub] as (
      string | null
    )[],
  };
}

/** An account's row and its capabilities change together (both are named `account:<id>`). */
type AccountEntry = { account: AccountFact | null; capabilities: Capability[] };
/** An app's grants in a tenant (named `app:<tenant>:<client>`). */
type AppEntry = { granted: Capability[] };

/** One decision's facts as they are kept: a person's live relationships as the list of their tenants. */
interface Parts {
  client: ClientFact | null;
  tenant: TenantFact | null;
  account: AccountEntry;
  session: SessionFact | null;
  app: AppEntry;
  personTenants: string[];
  subjectTenants: string[];
  catalogue: CatalogueEntry[];
}

type Names = ReturnType<typeof factNames>;
const NO_ACCOUNT: AccountEntry = { account: null, capabilities: [] };
const NO_TENANTS: string[] = [];

/**
 * The parts held for these names, or undefined when any is missing.
 *
 * An addressed person (a path's personId, which the caller chooses) is never held: a decision about one always reads
 * that person from the database. Held, a person of another tenant would be answered from memory while a person who
 * does not exist never is, and the time of the 404 would tell the two apart (contract: a 404 says nothing about
 * existence; tests/api/existence.ts measures it). Nor can a caller fill the bounded memory with ids of its choosing.
 * The token's own subject, which the caller does not choose, is held as any other fact.
 */
function heldParts(cache: FactCache, names: Names): Parts | undefined {
  const parts = {
    client: cache.get<ClientFact | null>(names.client),
    tenant: cache.get<TenantFact | null>(names.tenant),
    account: names.account ? cache.get<AccountEntry>(names.account) : NO_ACCOUNT,
    session: names.session ? cache.get<SessionFact | null>(names.session) : null,
    app: cache.get<AppEntry>(names.app),
    personTenants: names.person ? undefined : NO_TENANTS,
    subjectTenants: cache.get<string[]>(names.subject),
    catalogue: cache.get<CatalogueEntry[]>(names.catalogue),
  };
  return Object.values(parts).includes(undefined) ? undefined : (parts as Parts);
}

/** The parts of a pdp_fact_rows row (a missing id reads as none: null, or an empty list). */
const rowParts = (r: Record<string, unknown>): Parts =>
  ({
    client: r.client,
    tenant: r.tenant,
    account: { account: r.account, capabilities: r.account_capabilities },
    session: r.session,
    app: { granted: r.granted },
    personTenants: r.person_tenants,
    subjectTenants: r.subject_tenants,
    catalogue: r.catalogue ?? [],
  }) as Parts;

/** Keeps the parts read at revision `readAt` under their change-log names. */
function keepParts(cache: FactCache, readAt: number, names: Names, parts: Parts): void {
  const keep = (name: string | null, value: unknown) => name && cache.keep(readAt, name, value);
  keep(names.client, parts.client);
  keep(names.tenant, parts.tenant);
  keep(names.account, parts.account);
  keep(names.session, parts.session);
  keep(names.app, parts.app);
  keep(names.subject, parts.subjectTenants);
  keep(names.catalogue, parts.catalogue);
}

function decisionFacts(tenantId: string, p: Parts): DecisionFacts {
  return {
    client: p.client,
    tenant: p.tenant,
    account: p.account.account,
    session: p.session,
    granted: p.app.granted,
    accountCapabilities: p.account.capabilities,
    catalogue: p.catalogue,
    relationship: p.personTenants.includes(tenantId),
    personOfOtherTenant: p.personTenants.some((t) => t !== tenantId),
    subjectRelationship: p.subjectTenants.includes(tenantId),
  };
}

/**
 * Decisions asked for in the same event-loop turn share one revision reading when the turn ends; it is sent after
 * each of them was asked for. Those whose facts are not all held are read together, MAX_BATCH to a statement.
 */
export function knexPolicyStore(
  knex: Knex,
  { maxFacts = DEFAULT_FACT_ENTRIES, feed }: PolicyStoreOptions = {},
): PolicyStore {
  const cache = new FactCache(maxFacts);
  let pending: Pending[] = [];
  let trust: FeedTrust | undefined;
  const trustMs = feed?.trustMs ?? 0;

  /** The database's revision and the changes since the one held, applied; returns the revision read. */
  async function catchUp(): Promise<number> {
    const from = cache.revision;
    const { rows } = await preparedQuery<{ revision: string; changed: string[] }>(knex, 'pdp_revision', REVISION_SQL, [
      from,
    ]);
    const revision = Number(rows[0]!.revision);
    cache.advance(from, revision, rows[0]!.changed);
    return revision;
  }

  /**
   * True when the feed, read now (after every decision of the batch was asked for), shows that the facts held are
   * current. A change acknowledged before that was published before it was acknowledged: either before the feed was
   * last seen with this token, so before the database reading that followed, which therefore saw it; or after, into
   * this same feed (a feed that lost its data has another token), whose revision never decreases and so is at least
   * the change's. Either way the change's revision is at most the revision of the facts held.
   */
  const vouched = (mark: RevisionMark | undefined): boolean =>
    mark !== undefined &&
    trust !== undefined &&
    mark.token === trust.token &&
    mark.revision <= trust.revision &&
    cache.revision >= trust.revision &&
    performance.now() - trust.sentAt < trustMs;

  /** Brings the facts held up to date for decisions asked before this call: from the feed when it can vouch. */
  async function current(): Promise<void> {
    // A feed that cannot be read vouches for nothing: the database's revision is read instead.
    const mark = await feed?.read().catch(() => undefined);
    if (vouched(mark)) return;
    const sentAt = performance.now();
    const revision = await catchUp();
    if (mark && !(trust && trust.sentAt > sentAt)) trust = { token: mark.token, revision, sentAt };
  }

  async function readRows(batch: Pending[]): Promise<void> {
    const readAt = cache.revision;
    const names = batch.map((p) => factNames(p.input));
    const columns: (string | null)[][] = [[], [], [], [], [], []];
    for (const n of names) n.ids.forEach((v, i) => columns[i]!.push(v));
    const { rows } = await preparedQuery(knex, 'pdp_fact_rows', FACT_ROWS_SQL, columns);
    batch.forEach((p, i) => {
      // Read after the batch's revision reading, so at least as fresh as it.
      const parts = rowParts(rows[i]!);
      keepParts(cache, readAt, names[i]!, parts);
      p.resolve(decisionFacts(p.input.token.tenant_id, parts));
    });
  }

  async function run(batch: Pending[]): Promise<void> {
    try {
      await current();
    } catch (err) {
      // No revision, no decision from memory: every decision of the batch fails (the endpoint answers 503).
      for (const p of batch) p.reject(err);
      return;
    }
    const cold: Pending[] = [];
    for (const p of batch) {
      const held = heldParts(cache, factNames(p.input));
      if (held) p.resolve(decisionFacts(p.input.token.tenant_id, held));
      else cold.push(p);
    }
    for (let i = 0; i < cold.length; i += MAX_BATCH) {
      const part = cold.slice(i, i + MAX_BATCH);
      readRows(part).catch((err) => part.forEach((p) => p.reject(err)));
    }
  }

  function flush(): void {
    const all = pending;
    pending = [];
    void run(all);
  }
  return {
    facts: (input) =>
      new Promise((resolve, reject) => {
        if (pending.push({ input, resolve, reject }) === 1) setImmediate(flush);
      }),
  };
}
