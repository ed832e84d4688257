import { serve, type Running, type ServiceDeps } from '../common/service.js';
import { createBackendApp } from './app.js';

/**
 * The request heads the backend accepts: whatever the gateway accepted from a caller (Node's 16 KiB) plus the call
 * context it signs over the same path. At the default 16 KiB a URL the gateway took was refused here, and the caller
 * got the backend's bare parser answer with another request id.
 */
const FORWARDED_HEAD_BYTES = 64 * 1024;

export async function startBackend({
  config,
  log,
  knex,
  telemetry,
  internalSecret,
}: ServiceDeps & { internalSecret: string }): Promise<Running> {
  telemetry.addReadinessCheck('backend: database', () => knex.raw('select 1'));
  return serve(
    'backend',
    config.BACKEND_PORT,
    config,
    telemetry,
    log,
    createBackendApp({ knex, internalSecret, log }),
    {
      maxHeaderSize: FORWARDED_HEAD_BYTES,
    },
  );
}
