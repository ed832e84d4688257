// The whole system for a test suite: fresh database, real Redis when REDIS_URL is set, free ports.
import { parse, stringify } from 'yaml';
import { loadConfig } from '../../common/config.js';
import { startSystem, type System, type SystemOptions } from '../../infra/system.js';
import type { DatabaseOptions } from '../../common/db.js';
import { freshDatabase } from './database.js';
import { gatewayFileDirectory, SHIPPED_GATEWAY_FILE } from './gateway-files.js';

export async function startTestSystem(
  env: Record<string, string> = {},
  dbOptions: Pick<DatabaseOptions, 'idleTimeoutMs'> = {},
  systemOptions: Pick<SystemOptions, 'logDestination'> = {},
): Promise<System> {
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', ...env });
  const db = await freshDatabase(dbOptions);
  const system = await startSystem(config, { ...systemOptions, ephemeralPorts: true, db });
  return { ...system, close: async () => (await system.close(), await db.close()) };
}

/**
 * A system for suites that send many requests meant to be refused (fuzzing, probing, concurrent writers of one
 * record): the gateway's flood guard, the token endpoint's limits and the budget of wrong admin credentials are raised
 * far above what they send, so every answer is the one the request itself earns rather than a 429; and the gateway's
 * deadlines for the PDP and the backend are 10 s instead of 2 s and 5 s, so a CI machine busy with other suites cannot
 * turn an answer into a 503 (deadlines have their own fault suites). The gateway file is the shipped one with only
 * those settings changed.
 */
export async function startProbingSystem(env: Record<string, string> = {}): Promise<System> {
  const file = parse(SHIPPED_GATEWAY_FILE);
  const plugin = (name: string) => file.plugins.find((p: { name: string }) => p.name === name);
  plugin('flood-guard').config = { points: 1_000_000, durationS: 60 };
  plugin('authorize').config = { timeoutMs: 10_000 };
  file.upstreams.backend.timeoutMs = 10_000;
  const files = gatewayFileDirectory('probing-gateway');
  const system = await startTestSystem({
    GATEWAY_CONFIG: files.write(stringify(file)),
    TOKEN_RATE_LIMIT_PER_CLIENT: '1000000',
    TOKEN_RATE_LIMIT_PER_ADDRESS: '1000000',
    ADMIN_FAILURES_PER_ADDRESS: '1000000',
    ...env,
  });
  return { ...system, close: async () => (await system.close(), files.remove()) };
}
