import { backendUrl, pdpUrl, type Config } from '../common/config.js';
import { listen } from '../common/http.js';
import type { Logger } from '../common/log.js';
import type { Running } from '../common/service.js';
import { DECISION_PATH } from '../policies/decision.js';
import { createGatewayApp } from './app.js';
import { tokenVerifier } from './verify-token.js';
import { pdpClient } from './pdp-client.js';
import { createRateLimiter } from './rate-limit.js';
import { backendProxy } from './proxy.js';
import { upstreamPool } from './upstream.js';

export interface GatewayTargets {
  authUrl: string;
  pdpUrl: string;
  backendUrl: string;
  internalSecret: string;
}

export async function startGateway(config: Config, log: Logger, targets: GatewayTargets): Promise<Running> {
  const limiter = createRateLimiter({ redisUrl: config.REDIS_URL, log });
  const pdp = upstreamPool(targets.pdpUrl);
  const backend = upstreamPool(targets.backendUrl);
  const app = createGatewayApp({
    verify: tokenVerifier(targets.authUrl),
    decide: pdpClient(pdp, DECISION_PATH, targets.internalSecret),
    limiter,
    forward: backendProxy(backend, targets.internalSecret),
    log,
  });
  const http = await listen(config.GATEWAY_PORT);
  http.server.on('request', app);
  return {
    url: `${http.url}/v1`,
    async close() {
      await http.close();
      await Promise.all([limiter.close(), pdp.close(), backend.close()]);
    },
  };
}

export const gatewayTargetsFrom = (config: Config, internalSecret: string): GatewayTargets => ({
  authUrl: config.AUTH_URL,
  pdpUrl: pdpUrl(config),
  backendUrl: backendUrl(config),
  internalSecret,
});
