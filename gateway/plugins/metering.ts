// Plugin `metering`: every request that was forwarded and answered by the upstream is recorded once per
// (tenant, request id) into usage_records, with the upstream's status (usage-meter.ts batches the writes).
import { z } from 'zod';
import { usageMeter } from '../usage-meter.js';
import { definePlugin, stateOf } from './plugin.js';

export const metering = definePlugin({
  name: 'metering',
  settings: z.strictObject({
    batchSize: z.number().int().positive().max(10_000).default(200),
    flushIntervalMs: z.number().int().positive().max(60_000).default(1000),
  }),
  after: ['authorize'],
  perRoute: false,
  start(s, env) {
    const meter = usageMeter(env.knex, s, env.log);
    env.telemetry.addBacklog('metering', meter.pending);
    return {
      handler: (route) => (_req, res, next) => {
        res.once('finish', () => {
          const { forwarded, requestId, claims } = stateOf(res);
          if (!forwarded) return;
          meter.record({
            request_id: requestId, tenant_id: claims!.tenant_id, client_id: claims!.client_id,
            account_id: claims!.actor_account_id!, operation_id: route.operationId, status: res.statusCode,
          });
        });
        next();
      },
      close: () => meter.close(),
    };
  },
});
