import { serve, type Running, type ServiceDeps } from '../common/service.js';
import { createBackendApp } from './app.js';

export async function startBackend({
  config,
  log,
  knex,
  telemetry,
  internalSecret,
}: ServiceDeps & { internalSecret: string }): Promise<Running> {
  telemetry.addReadinessCheck('backend: database', () => knex.raw('select 1'));
  return serve('backend', config.BACKEND_PORT, config, telemetry, log, createBackendApp({ knex, internalSecret, log }));
}
