// Plugin `metering`: every request that was forwarded and answered by the upstream is a row of usage_records, with
// the upstream's status, unless it is a retry of a metered call (usage-meter.ts: the retry rule and the batches).
import { usageMeter } from './usage-meter.js';
import { definePlugin, stateOf } from '../plugin.js';
import { settings } from './schema.js';

export const metering = definePlugin({
  name: 'metering',
  settings,
  after: ['authorize'],
  perRoute: false,
  start(s, env) {
    const meter = usageMeter(env.knex, env.redis, s, env.log);
    env.telemetry.addBacklog('metering', meter.pending);
    return {
      handler: (route) => (req, res, next) => {
        res.once('finish', () => {
          const { forwarded, requestId, requestIdFromCaller, claims } = stateOf(res);
          if (!forwarded) return;
          void meter.meter(
            {
              tenantId: claims!.tenant_id,
              requestId,
              requestIdFromCaller,
              clientId: claims!.client_id,
              subject: claims!.sub,
              method: req.method,
              path: req.originalUrl,
              body: Buffer.isBuffer(req.body) ? req.body : undefined,
            },
            {
              client_id: claims!.client_id,
              account_id: claims!.actor_account_id!,
              operation_id: route.operationId,
              status: res.statusCode,
            },
          );
        });
        next();
      },
      close: () => meter.close(),
    };
  },
});
