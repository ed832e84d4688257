// The product's whole configuration: one table of settings with documented defaults, validated once at start.
// README's configuration table is generated from SETTINGS (infra/config-reference.ts); a bad value stops the process
// with a message naming the variable.
import { z } from 'zod';

const port = z.coerce.number().int().min(0).max(65535);
const url = z.url({ protocol: /^https?$/ }).transform((u) => u.replace(/\/+$/, ''));
const optionalUrl = z.string().trim().min(1).optional();
/**
 * A URL with one of `schemes`: the drivers read anything else as something else (ioredis a bare word as a host name,
 * an http URL as a socket path), which would fail only at the first connection, and far from the setting.
 */
const serviceUrl = (...schemes: string[]) =>
  z
    .string()
    .trim()
    .min(1)
    .refine((v) => URL.canParse(v) && schemes.includes(new URL(v).protocol.slice(0, -1)), {
      message: `must be a ${schemes.map((s) => `${s}://`).join(' or ')} URL`,
    })
    .optional();
const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

export const SETTINGS = {
  ISSUER_PORT: { schema: port.default(3000), doc: 'Issuer listen port.' },
  AUTH_URL: { schema: url.default('http://127.0.0.1:3000'), doc: 'Public URL of the issuer; also the `iss` claim.' },
  GATEWAY_PORT: { schema: port.default(8080), doc: 'Gateway listen port (base_url = http://host:port/v1).' },
  GATEWAY_PUBLIC_URL: {
    schema: url.optional(),
    doc:
      'Public URL of the gateway, before /v1 (behind an Ingress or load balancer: its address): what DPoP proofs ' +
      "name in htu. The dpop plugin's publicBaseUrl overrides it. Unset = the address the gateway listens on.",
  },
  PDP_PORT: {
    schema: port.default(8181),
    doc: 'Policy decision point and admin API port (the admin API under /admin/v1).',
  },
  PDP_URL: { schema: url.optional(), doc: 'Where the gateway reaches the PDP. Unset = http://127.0.0.1:PDP_PORT.' },
  PDP_FACT_CACHE_ENTRIES: {
    schema: z.coerce.number().int().min(0).default(100_000),
    doc:
      'Decision facts each PDP keeps in memory (a client, tenant, account, session, app grants, person), least ' +
      'recently used dropped first; ~400 bytes each (the default ~40 MB). Kept current on every decision batch by ' +
      "the revision feed every writer publishes to (Redis, or memory when embedded), else by the database's " +
      'revision. 0 = none kept: every decision reads the database.',
  },
  BACKEND_PORT: { schema: port.default(8090), doc: 'Backend port; internal, only the gateway may call it.' },
  BACKEND_URL: {
    schema: url.optional(),
    doc: 'Where the gateway reaches the backend. Unset = http://127.0.0.1:BACKEND_PORT.',
  },
  INTERNAL_SECRET: {
    schema: z.string().min(32).optional(),
    doc:
      'Shared secret the gateway presents to the PDP and the backend (>= 32 chars). ' +
      'Required when they run as separate processes; npm start generates one.',
  },
  LISTEN_HOST: {
    schema: z.string().trim().min(1).default('127.0.0.1'),
    doc: 'Address every service listens on. 127.0.0.1 keeps them on this machine; 0.0.0.0 in a container.',
  },
  MANAGEMENT_PORT: {
    schema: port.optional(),
    doc:
      'Port of the management listener (one per process): /metrics, /livez, /readyz. ' +
      'Unset = none, so a run that sets only the documented service ports never collides on it; containers set 9464.',
  },
  DATABASE_URL: {
    schema: serviceUrl('postgres', 'postgresql'),
    doc: 'PostgreSQL URL. Unset = embedded PostgreSQL (PGlite).',
  },
  DATABASE_STATEMENT_TIMEOUT_MS: {
    schema: z.coerce.number().int().min(0).default(10_000),
    doc:
      'PostgreSQL statement_timeout of every service connection: ' +
      'a statement running longer is cancelled and its request answers 503. 0 = none. Migrations are exempt.',
  },
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: {
    schema: z.coerce.number().int().min(0).default(10_000),
    doc:
      'PostgreSQL idle_in_transaction_session_timeout: ' +
      'a transaction left idle longer is ended with its connection, releasing its locks. 0 = none. ' +
      'An export waiting on a slow reader is allowed 5 minutes.',
  },
  PGLITE_DATA_DIR: {
    schema: optionalUrl,
    doc: 'Directory for the embedded database. Unset = .data/pglite (npm start) or in-memory (tests).',
  },
  GATEWAY_CONFIG: {
    schema: optionalUrl,
    doc: 'Path of the gateway file (upstreams, routes, plugins). Unset = gateway/gateway.yaml.',
  },
  REDIS_URL: {
    schema: serviceUrl('redis', 'rediss'),
    doc:
      "Redis URL for rate limiting (gateway layers, flood guard, token endpoint) and the PDPs' revision feed, " +
      'shared by every instance (give it to every service). Unset = in-process limiters (each process counts ' +
      "alone), and PDPs on PostgreSQL read the database's revision on every decision batch.",
  },
  REDIS_CLUSTER: {
    schema: bool.default(false),
    doc: 'REDIS_URL names one node of a Redis Cluster; the other nodes and the slots are discovered from it.',
  },
  ADMIN_TOKEN: {
    schema: z.string().min(16).optional(),
    doc: 'Operator token for the admin API. Unset = generated and printed at start.',
  },
  ISSUER_JWKS: {
    schema: z.string().optional(),
    doc: 'JSON JWKS of private EC P-256 keys; the first signs, all are published.',
  },
  ISSUER_JWKS_FILE: {
    schema: optionalUrl,
    doc: 'Path of a file holding ISSUER_JWKS. Unset (both) = a key generated once and kept in the database.',
  },
  ISSUER_ENABLE_CLIENT_CREDENTIALS: {
    schema: bool.default(false),
    doc: 'Enable the client_credentials grant (workload tokens).',
  },
  ISSUER_PURGE_INTERVAL_S: {
    schema: z.coerce.number().int().min(1).max(86400).default(60),
    doc:
      'How often the issuer deletes expired codes, sessions, grants and refresh tokens ' +
      '(in batches of 500, at most 10,000 a round).',
  },
  ACCESS_TOKEN_TTL_S: {
    schema: z.coerce.number().int().min(1).max(900).default(900),
    doc: 'Access token lifetime; for tests only, the contract value is 900.',
  },
  TOKEN_RATE_LIMIT_PER_CLIENT: {
    schema: z.coerce.number().int().min(1).default(600),
    doc: 'Tokens issued per client per TOKEN_RATE_LIMIT_WINDOW_S at the token endpoint.',
  },
  TOKEN_RATE_LIMIT_PER_ADDRESS: {
    schema: z.coerce.number().int().min(1).default(120),
    doc: 'Failed token requests per source address and named client per TOKEN_RATE_LIMIT_WINDOW_S.',
  },
  TOKEN_RATE_LIMIT_PER_ADDRESS_ALL_CLIENTS: {
    schema: z.coerce.number().int().min(1).optional(),
    doc:
      'Failed token requests per source address, whatever the client named, per TOKEN_RATE_LIMIT_WINDOW_S. ' +
      'Unset = 10 x TOKEN_RATE_LIMIT_PER_ADDRESS.',
  },
  ADMIN_FAILURES_PER_ADDRESS: {
    schema: z.coerce.number().int().min(1).default(100),
    doc:
      'Wrong admin credentials (admin API bearers, console sign-ins) per client address per 15 minutes; ' +
      'past it, wrong ones get 429 until the window ends (a right one is always answered).',
  },
  TRUST_PROXY: {
    schema: z
      .string()
      .trim()
      .min(1)
      .optional()
      .transform((v) => (v === undefined ? false : /^\d+$/.test(v) ? Number(v) : v)),
    doc:
      'Proxies in front of the issuer and the admin service whose X-Forwarded-For is believed ' +
      '(Express "trust proxy"): a hop count such as 1, or addresses/subnets such as 10.0.0.0/8. ' +
      'Unset = none: the connecting address is the client (sign-in and token endpoint limits, audit).',
  },
  TOKEN_RATE_LIMIT_WINDOW_S: {
    schema: z.coerce.number().int().min(1).max(86_400).default(60),
    doc: 'Window of the token endpoint limits, in seconds.',
  },
  LOG_LEVEL: {
    schema: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    doc: 'pino log level; JSON lines on stdout, one per request at info.',
  },
} as const;

type Settings = typeof SETTINGS;
export type Config = { [K in keyof Settings]: z.output<Settings[K]['schema']> };

export class ConfigError extends Error {}

/** Parses every setting from `env`; throws ConfigError listing each bad variable. */
/** A refused value as the message shows it: a URL's password hidden. */
export function withoutPassword(raw: string | undefined): string | undefined {
  if (!raw || !URL.canParse(raw)) return raw;
  const url = new URL(raw);
  if (!url.password) return raw;
  url.password = '***';
  return url.toString();
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const out: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, { schema }] of Object.entries(SETTINGS)) {
    const raw = env[name] === '' ? undefined : env[name];
    const parsed = (schema as z.ZodType).safeParse(raw);
    if (parsed.success) out[name] = parsed.data;
    else
      problems.push(
        `${name}=${JSON.stringify(withoutPassword(raw))}: ${parsed.error.issues.map((i) => i.message).join(', ')}`,
      );
  }
  if (env.ISSUER_JWKS && env.ISSUER_JWKS_FILE) problems.push('ISSUER_JWKS and ISSUER_JWKS_FILE: set one, not both');
  // One line, whatever the number of problems: a start that fails ends with that line alone.
  if (problems.length) throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
  return out as Config;
}

export const pdpUrl = (c: Config) => c.PDP_URL ?? `http://127.0.0.1:${c.PDP_PORT}`;
export const backendUrl = (c: Config) => c.BACKEND_URL ?? `http://127.0.0.1:${c.BACKEND_PORT}`;
