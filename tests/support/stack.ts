// The whole chain as separate processes with a consented token, ready for traffic: a private PostgreSQL cluster and a
// private Redis (or, for the soak, a fresh database on DATABASE_URL's server and REDIS_URL's Redis), the four
// services, one tenant with generous limits, persons and an extension owned by the tenant's app.
import { launchBrowser } from './browser.js';
import { adminClient, createPerson, setupTenant, type AdminClient, type TenantSetup } from './admin.js';
import { obtainTokens, type Tokens } from './oauth.js';
import { PERSON_SCOPES, registerExtension } from './extensions.js';
import { scratchDatabase } from './database.js';
import {
  privatePostgres,
  privateRedis,
  startProcesses,
  type Child,
  type PrivatePostgres,
  type ProcessSystem,
} from './processes.js';

/** GET /me for probes, and the person routes for traffic. */
const SCOPES = `svc.profile.self.read ${PERSON_SCOPES}`;

export interface Stack {
  system: ProcessSystem;
  /** The private cluster; undefined when the stack runs on DATABASE_URL's server. */
  postgres: PrivatePostgres | undefined;
  /** The private redis-server; undefined when the stack runs on REDIS_URL. */
  redis: Child | undefined;
  /** The Redis every service uses (the private one's URL, or REDIS_URL). */
  redisUrl: string;
  admin: AdminClient;
  tenant: TenantSetup;
  token: string;
  refreshToken: string;
  extensionId: string;
  personIds: string[];
  close(): Promise<void>;
}

/**
 * `shared: true` uses DATABASE_URL's server (a database of its own) and REDIS_URL when they are set; otherwise, and
 * always for fault tests, which stop them, a private cluster and a private Redis.
 */
export async function startStack(opts: {
  persons: number;
  shared?: boolean;
  rateLimit?: { tenant: number; account: number };
  /** Settings for every service beyond ports, stores and secrets (ISSUER_JWKS, for a test that signs tokens). */
  settings?: Record<string, string>;
}): Promise<Stack> {
  const shared = opts.shared === true;
  const database = shared && process.env.DATABASE_URL ? await scratchDatabase(process.env.DATABASE_URL) : undefined;
  const postgres = database ? undefined : await privatePostgres();
  const redis = shared && process.env.REDIS_URL ? undefined : await privateRedis();
  const cleanups: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  };
  if (database) cleanups.push(database.drop);
  if (postgres) cleanups.push(postgres.destroy);
  if (redis) cleanups.push(() => redis.server.stop());
  try {
    const redisUrl = redis?.url ?? process.env.REDIS_URL!;
    const system = await startProcesses({
      databaseUrl: database?.url ?? postgres!.url,
      redisUrl,
      ...(opts.settings && { settings: opts.settings }),
    });
    cleanups.push(system.close);
    const admin = adminClient(system);
    const tenant = await setupTenant(admin, { capabilities: SCOPES.split(' ') });
    const limit = opts.rateLimit ?? { tenant: 1_000_000, account: 1_000_000 };
    await admin.ok('PATCH', `/tenants/${tenant.tenantId}`, {
      rateLimit: { tenant: { points: limit.tenant, durationS: 60 }, account: { points: limit.account, durationS: 60 } },
    });
    const extensionId = await registerExtension(admin, tenant.clientId);
    const personIds = [tenant.personId];
    for (let i = 1; i < opts.persons; i++) personIds.push(await createPerson(admin, tenant.tenantId));
    const browser = await launchBrowser();
    let tokens: Tokens;
    try {
      tokens = await obtainTokens(browser, { authUrl: system.authUrl, ...tenant }, tenant, SCOPES);
    } finally {
      await browser.close();
    }
    return {
      system,
      postgres,
      redis: redis?.server,
      redisUrl,
      admin,
      tenant,
      token: tokens.access_token,
      refreshToken: tokens.refresh_token!,
      extensionId,
      personIds,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
