import type { Knex } from 'knex';
import type { Config } from '../common/config.js';
import type { Logger } from '../common/log.js';
import { serve, type Running } from '../common/service.js';
import type { Telemetry } from '../common/telemetry.js';
import { createBackendApp } from './app.js';

export async function startBackend(config: Config, log: Logger, knex: Knex, internalSecret: string, telemetry: Telemetry): Promise<Running> {
  telemetry.addReadinessCheck('backend: database', () => knex.raw('select 1'));
  return serve('backend', config.BACKEND_PORT, config, telemetry, log, createBackendApp({ knex, internalSecret, log }));
}
