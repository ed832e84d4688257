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

export interface GatewayTargets {
  authUrl: string;
  pdpUrl: string;
  backendUrl: string;
  internalSecret: string;
}

export async function startGateway(config: Config, log: Logger, targets: GatewayTargets): Promise<Running> {
  const limiter = createRateLimiter({ redisUrl: config.REDIS_URL, log });
  const app = createGatewayApp({
    verify: tokenVerifier(targets.authUrl),
    decide: pdpClient(targets.pdpUrl, DECISION_PATH),
    limiter,
    forward: backendProxy(targets.backendUrl, targets.internalSecret),
    log,
  });
  const http = await listen(config.GATEWAY_PORT);
  http.server.on('request', app);
  return {
    url: `${http.url}/v1`,
    async close() {
      await http.close();
      await limiter.close();
    },
  };
}

export const gatewayTargetsFrom = (config: Config, internalSecret: string): GatewayTargets => ({
  authUrl: config.AUTH_URL,
  pdpUrl: pdpUrl(config),
  backendUrl: backendUrl(config),
  internalSecret,
});
