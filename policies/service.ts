import { createHash } from 'node:crypto';
import { serve, type Running, type ServiceDeps } from '../common/service.js';
import { createPoliciesApp } from './app.js';
import { batchedDecisionLog } from './decision-log.js';
import { connectRedis, limiterStore } from '../common/rate-limit-store.js';
import { adminCredentialLimits, credentialThrottle } from '../common/credential-throttle.js';
import type { RevisionFeed } from '../common/revision-feed.js';

export async function startPolicies({
  config,
  log,
  knex,
  telemetry,
  adminToken,
  internalSecret,
  revisions,
}: ServiceDeps & {
  adminToken: string;
  internalSecret: string;
  revisions?: RevisionFeed | undefined;
}): Promise<Running> {
  const decisionLog = batchedDecisionLog(knex, log);
  // Wrong admin credentials are counted where the other limits are: Redis when configured, so replicas count together.
  // The counters are named after the deployment's operator token (a digest of it): its replicas share them, while
  // another deployment (or test system) on the same Redis never spends this one's budget.
  const redis = await connectRedis(config.REDIS_URL, log, telemetry, config.REDIS_CLUSTER);
  const deployment = createHash('sha256').update(adminToken).digest('hex').slice(0, 16);
  const adminThrottle = credentialThrottle(
    limiterStore(redis),
    `admin-credentials:${deployment}`,
    adminCredentialLimits(config.ADMIN_FAILURES_PER_ADDRESS),
  );
  telemetry.addBacklog('decision_log', decisionLog.pending);
  telemetry.addReadinessCheck('policies: database', () => knex.raw('select 1'));
  const http = await serve(
    'policies',
    config.PDP_PORT,
    config,
    telemetry,
    log,
    createPoliciesApp({
      knex,
      adminToken,
      internalSecret,
      log,
      decisionLog,
      telemetry,
      trustProxy: config.TRUST_PROXY,
      adminThrottle,
      authUrl: config.AUTH_URL,
      clientCredentials: config.ISSUER_ENABLE_CLIENT_CREDENTIALS,
      maxFacts: config.PDP_FACT_CACHE_ENTRIES,
      revisions,
    }),
  );
  return {
    url: http.url,
    async close() {
      await http.close();
      await decisionLog.close();
      redis?.disconnect();
    },
  };
}
