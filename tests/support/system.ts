// The whole system for a test suite: fresh database, real Redis when REDIS_URL is set, free ports.
import { loadConfig } from '../../common/config.js';
import { startSystem, type System } from '../../infra/system.js';
import type { DatabaseOptions } from '../../common/db.js';
import { freshDatabase } from './database.js';

export async function startTestSystem(env: Record<string, string> = {}, dbOptions: Pick<DatabaseOptions, 'idleTimeoutMs'> = {}): Promise<System> {
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', ...env });
  const db = await freshDatabase(dbOptions);
  const system = await startSystem(config, { ephemeralPorts: true, db });
  return { ...system, close: async () => (await system.close(), await db.close()) };
}
