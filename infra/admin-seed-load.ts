// `npm run admin -- seed-load --tenant <id> --client <id> --persons N`: prepares a tenant for a k6 run. It creates the
// persons the scripts sign in as (load-00001 … load-N, one password), raises the tenant's rate limits so the run
// measures the path instead of the limiter, and writes the users file the k6 scripts read (USERS_FILE). Everything
// goes through the admin API, as an operator's calls would; a second run with the same file reuses what exists.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { RateLimitWindowSchema } from '../wire/decision.js';
import {
  AdminCallFailed,
  COMMON_FLAGS_HELP,
  UsageError,
  adminJson,
  adminTarget,
  exitCodeOf,
  parseFlags,
  type AdminTarget,
} from './admin-call.js';

const SEED_LOAD_HELP = [
  'npm run admin -- seed-load --tenant <tenantId> --client <clientId> --persons <N> [--extension <extensionId>]',
  '                           [--out load-users.json] [--password <p>] [--rate-limit-points 1000000]',
  '',
  'Creates persons load-00001 … load-N in the tenant (those already there are kept), raises the tenant and account',
  'rate limits to --rate-limit-points per 60 s (the operator token: a tenant admin key is held to its plan ceiling),',
  'and writes the users file the k6 scripts sign in with: pass it as -e USERS_FILE=<absolute path>.',
  'The client must be a public third-party app granted the capabilities the scripts use (the demo app is).',
  '',
  COMMON_FLAGS_HELP,
].join('\n');

/** What the k6 scripts read from USERS_FILE (infra/k6/lib/users.ts reads the same shape). */
export interface LoadUsers {
  tenantId: string;
  clientId: string;
  redirectUri: string;
  /** The client's granted capabilities: the scope each sign-in asks for. */
  scope: string;
  extensionId?: string;
  users: { username: string; password: string; personId: string }[];
}

export interface SeedLoadIo {
  out(text: string): void;
  err(text: string): void;
}

const PREFIX = 'load-';
const usernameOf = (n: number) => `${PREFIX}${String(n).padStart(5, '0')}`;
/** Persons created at once: each costs the admin service a password hash. */
const PARALLEL_CREATES = 4;
const MAX_PERSONS = 100_000;

interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

async function* pages<T>(target: AdminTarget, path: string): AsyncGenerator<T> {
  let cursor: string | null = null;
  do {
    const page: Page<T> = await adminJson(
      target,
      'GET',
      `${path}${path.includes('?') ? '&' : '?'}limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    yield* page.items;
    cursor = page.nextCursor;
  } while (cursor);
}

/** The previous users file, when --out names one: its password and persons are reused. */
function previousRun(path: string, tenantId: string): LoadUsers | undefined {
  if (!existsSync(path)) return undefined;
  const previous = JSON.parse(readFileSync(path, 'utf8')) as LoadUsers;
  return previous.tenantId === tenantId ? previous : undefined;
}

/** The command line's settings, checked before anything is sent. */
function seedSettings(args: string[]) {
  const flags = parseFlags(args, {
    tenant: { type: 'string' },
    client: { type: 'string' },
    persons: { type: 'string' },
    extension: { type: 'string' },
    out: { type: 'string', default: 'load-users.json' },
    password: { type: 'string' },
    'rate-limit-points': { type: 'string', default: '1000000' },
  });
  const persons = Number(flags.persons);
  const points = Number(flags['rate-limit-points']);
  if (flags.help) return { help: true as const };
  if (!flags.tenant) throw new UsageError('seed-load needs --tenant <tenantId>');
  if (!flags.client) throw new UsageError('seed-load needs --client <clientId>');
  if (!Number.isInteger(persons) || persons < 1 || persons > MAX_PERSONS)
    throw new UsageError(`--persons must be a whole number from 1 to ${MAX_PERSONS}`);
  if (!RateLimitWindowSchema.safeParse({ points, durationS: 60 }).success)
    throw new UsageError('--rate-limit-points must be a whole number from 1 to 1,000,000');
  return { help: false as const, flags, tenantId: flags.tenant, clientId: flags.client, persons, points };
}

/** Runs the seed-load command line; returns the exit code (0 done, 1 refused, 2 usage, 3 unreachable or failing). */
export function runSeedLoad(args: string[], env: Record<string, string | undefined>, io: SeedLoadIo): Promise<number> {
  return exitCodeOf(
    async () => {
      const settings = seedSettings(args);
      if (settings.help) return (io.out(SEED_LOAD_HELP), 0);
      const { flags, tenantId, persons, points } = settings;
      const target = adminTarget(flags, env);
      const out = resolve(flags.out);
      const client = await appToSignInWith(target, tenantId, settings.clientId);
      const grant = await adminJson<{ capabilities: string[] }>(
        target,
        'GET',
        `/tenants/${tenantId}/grants/${encodeURIComponent(client.clientId)}`,
      );
      const previous = previousRun(out, tenantId);
      const password = flags.password ?? previous?.users[0]?.password ?? randomBytes(18).toString('base64url');
      const fromFile = new Set(previous?.users.map((u) => u.username));
      const existing = new Map<string, string>();
      for await (const person of pages<{ personId: string; username?: string }>(
        target,
        `/tenants/${tenantId}/persons?q=${PREFIX}`,
      )) {
        if (person.username) existing.set(person.username, person.personId);
      }
      const wanted = Array.from({ length: persons }, (_, i) => usernameOf(i + 1));
      const unknown = flags.password === undefined ? wanted.filter((u) => existing.has(u) && !fromFile.has(u)) : [];
      if (unknown.length)
        throw new UsageError(
          `${unknown[0]} (and ${unknown.length - 1} more) already exist in the tenant but not in ${out}: ` +
            'pass the --password they were created with',
        );
      const missing = wanted.filter((u) => !existing.has(u));
      // Written after every batch of creations, so a run that
      // stops half-way leaves the password of the persons it made.
      const save = () => {
        const file: LoadUsers = {
          tenantId,
          clientId: client.clientId,
          redirectUri: client.redirectUris[0]!,
          scope: grant.capabilities.join(' '),
          ...(flags.extension && { extensionId: flags.extension }),
          users: wanted
            .filter((u) => existing.has(u))
            .map((username) => ({ username, password, personId: existing.get(username)! })),
        };
        writeFileSync(out, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
      };
      for (let i = 0; i < missing.length; i += PARALLEL_CREATES) {
        const batch = await Promise.allSettled(
          missing.slice(i, i + PARALLEL_CREATES).map(async (username) => {
            const created = await adminJson<{ personId: string }>(target, 'POST', `/tenants/${tenantId}/persons`, {
              displayName: `Load user ${username.slice(PREFIX.length)}`,
              username,
              password,
            });
            existing.set(username, created.personId);
          }),
        );
        save();
        const failed = batch.find((r) => r.status === 'rejected');
        if (failed) throw failed.reason;
      }
      save();
      const window = { points, durationS: 60 };
      await adminJson(target, 'PATCH', `/tenants/${tenantId}`, { rateLimit: { tenant: window, account: window } });
      io.out(
        [
          `${persons} persons ready (${missing.length} created), rate limits ${points} per 60 s; ` +
            `users written to ${out}`,
          `k6 run -e USERS_FILE=${out} infra/k6/api-read.k6.ts   ` +
            `(or: npm run k6 -- infra/k6/api-read.k6.ts -e USERS_FILE=${out})`,
        ].join('\n'),
      );
      return 0;
    },
    io,
    SEED_LOAD_HELP,
  );
}

interface ClientItem {
  clientId: string;
  kind: string;
  type: string;
  status: string;
  redirectUris: string[];
}

/** The tenant's client the scripts sign in with: an active public third-party app (PKCE, no secret to hand out). */
async function appToSignInWith(target: AdminTarget, tenantId: string, clientId: string): Promise<ClientItem> {
  for await (const client of pages<ClientItem>(target, `/tenants/${tenantId}/clients`)) {
    if (client.clientId !== clientId) continue;
    if (
      client.kind !== 'third_party' ||
      client.type !== 'public' ||
      client.status !== 'active' ||
      !client.redirectUris.length
    ) {
      throw new AdminCallFailed(
        `${clientId} is not an active public third-party app with a redirect URI ` +
          `(kind ${client.kind}, type ${client.type}, status ${client.status})`,
        1,
      );
    }
    return client;
  }
  throw new AdminCallFailed(`the tenant ${tenantId} has no client ${clientId}`, 1);
}
