// `npm run admin -- seed-load --tenant <id> --client <id> --persons N`: prepares a tenant for a k6 run. It creates the
// persons the scripts sign in as (load-00001 … load-N, one password), raises the tenant's rate limits so the run
// measures the path instead of the limiter, and writes the users file the k6 scripts read (USERS_FILE). Everything
// goes through the admin API, as an operator's calls would; a second run with the same file reuses what exists.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { RateLimitWindowSchema } from '../wire/decision.js';

const SEED_LOAD_HELP = [
  'npm run admin -- seed-load --tenant <tenantId> --client <clientId> --persons <N> [--extension <extensionId>]',
  '                           [--out load-users.json] [--password <p>] [--rate-limit-points 1000000]',
  '',
  'Creates persons load-00001 … load-N in the tenant (those already there are kept), raises the tenant and account',
  'rate limits to --rate-limit-points per 60 s (the operator token: a tenant admin key is held to its plan ceiling),',
  'and writes the users file the k6 scripts sign in with: pass it as -e USERS_FILE=<absolute path>.',
  'The client must be a public third-party app granted the capabilities the scripts use (the demo app is).',
  '',
  'Common flags: --url <admin URL> (ADMIN_URL), --token <token> (ADMIN_TOKEN), --help',
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

/** A refusal or failure of the admin API, with the exit code the CLI gives it (1 refused, 3 unreachable or 5xx). */
class AdminCallFailed extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 3,
  ) {
    super(message);
  }
}

function adminApi(base: string, token: string) {
  return async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    let res: Response;
    try {
      res = await fetch(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body !== undefined && { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
    } catch (err) {
      throw new AdminCallFailed(`cannot reach the admin API at ${base}: ${(err as Error).message}`, 3);
    }
    const text = await res.text();
    if (!res.ok) throw new AdminCallFailed(`${method} ${path} -> ${res.status}\n${text}`, res.status >= 500 ? 3 : 1);
    return (text ? JSON.parse(text) : undefined) as T;
  };
}
type AdminApi = ReturnType<typeof adminApi>;

interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

async function* pages<T>(call: AdminApi, path: string): AsyncGenerator<T> {
  let cursor: string | null = null;
  do {
    const page: Page<T> = await call(
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

/** Runs the seed-load command line; returns the exit code (0 done, 1 refused, 2 usage, 3 unreachable or failing). */
export async function runSeedLoad(
  args: string[],
  env: Record<string, string | undefined>,
  io: SeedLoadIo,
): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        tenant: { type: 'string' },
        client: { type: 'string' },
        persons: { type: 'string' },
        extension: { type: 'string' },
        out: { type: 'string', default: 'load-users.json' },
        password: { type: 'string' },
        'rate-limit-points': { type: 'string', default: '1000000' },
        url: { type: 'string' },
        token: { type: 'string' },
        help: { type: 'boolean' },
      },
      strict: true,
    }));
  } catch (err) {
    io.err(`${(err as Error).message}\n\n${SEED_LOAD_HELP}`);
    return 2;
  }
  if (values.help) {
    io.out(SEED_LOAD_HELP);
    return 0;
  }
  const persons = Number(values.persons);
  const points = Number(values['rate-limit-points']);
  const token = values.token ?? env.ADMIN_TOKEN;
  const problem = !values.tenant
    ? 'seed-load needs --tenant <tenantId>'
    : !values.client
      ? 'seed-load needs --client <clientId>'
      : !Number.isInteger(persons) || persons < 1 || persons > MAX_PERSONS
        ? `--persons must be a whole number from 1 to ${MAX_PERSONS}`
        : !RateLimitWindowSchema.safeParse({ points, durationS: 60 }).success
          ? '--rate-limit-points must be a whole number from 1 to 1,000,000'
          : !token
            ? 'no admin token: set ADMIN_TOKEN or pass --token (the operator token npm start prints)'
            : undefined;
  if (problem) {
    io.err(`${problem}\n\n${SEED_LOAD_HELP}`);
    return 2;
  }
  const out = resolve(values.out);
  const tenantId = values.tenant!;
  const call = adminApi((values.url ?? env.ADMIN_URL ?? 'http://127.0.0.1:8181/admin/v1').replace(/\/+$/, ''), token!);
  try {
    const client = await appToSignInWith(call, tenantId, values.client!);
    const grant = await call<{ capabilities: string[] }>(
      'GET',
      `/tenants/${tenantId}/grants/${encodeURIComponent(client.clientId)}`,
    );
    const previous = previousRun(out, tenantId);
    const password = values.password ?? previous?.users[0]?.password ?? randomBytes(18).toString('base64url');
    const fromFile = new Set(previous?.users.map((u) => u.username));
    const existing = new Map<string, string>();
    for await (const person of pages<{ personId: string; username?: string }>(
      call,
      `/tenants/${tenantId}/persons?q=${PREFIX}`,
    )) {
      if (person.username) existing.set(person.username, person.personId);
    }
    const wanted = Array.from({ length: persons }, (_, i) => usernameOf(i + 1));
    const unknown = values.password === undefined ? wanted.filter((u) => existing.has(u) && !fromFile.has(u)) : [];
    if (unknown.length) {
      io.err(
        `${unknown[0]} (and ${unknown.length - 1} more) already exist in the tenant but not in ${out}: pass the --password they were created with`,
      );
      return 2;
    }
    const missing = wanted.filter((u) => !existing.has(u));
    // Written after every batch of creations, so a run that stops half-way leaves the password of the persons it made.
    const save = () => {
      const file: LoadUsers = {
        tenantId,
        clientId: client.clientId,
        redirectUri: client.redirectUris[0]!,
        scope: grant.capabilities.join(' '),
        ...(values.extension && { extensionId: values.extension }),
        users: wanted
          .filter((u) => existing.has(u))
          .map((username) => ({ username, password, personId: existing.get(username)! })),
      };
      writeFileSync(out, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
    };
    for (let i = 0; i < missing.length; i += PARALLEL_CREATES) {
      const batch = await Promise.allSettled(
        missing.slice(i, i + PARALLEL_CREATES).map(async (username) => {
          const created = await call<{ personId: string }>('POST', `/tenants/${tenantId}/persons`, {
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
    await call('PATCH', `/tenants/${tenantId}`, { rateLimit: { tenant: window, account: window } });
    io.out(
      [
        `${persons} persons ready (${missing.length} created), rate limits ${points} per 60 s; users written to ${out}`,
        `k6 run -e USERS_FILE=${out} infra/k6/api-read.k6.ts   (or: npm run k6 -- infra/k6/api-read.k6.ts -e USERS_FILE=${out})`,
      ].join('\n'),
    );
    return 0;
  } catch (err) {
    if (!(err instanceof AdminCallFailed)) throw err;
    io.err(err.message);
    return err.exitCode;
  }
}

interface ClientItem {
  clientId: string;
  kind: string;
  type: string;
  status: string;
  redirectUris: string[];
}

/** The tenant's client the scripts sign in with: an active public third-party app (PKCE, no secret to hand out). */
async function appToSignInWith(call: AdminApi, tenantId: string, clientId: string): Promise<ClientItem> {
  for await (const client of pages<ClientItem>(call, `/tenants/${tenantId}/clients`)) {
    if (client.clientId !== clientId) continue;
    if (
      client.kind !== 'third_party' ||
      client.type !== 'public' ||
      client.status !== 'active' ||
      !client.redirectUris.length
    ) {
      throw new AdminCallFailed(
        `${clientId} is not an active public third-party app with a redirect URI (kind ${client.kind}, type ${client.type}, status ${client.status})`,
        1,
      );
    }
    return client;
  }
  throw new AdminCallFailed(`the tenant ${tenantId} has no client ${clientId}`, 1);
}
