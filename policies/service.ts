import type { Knex } from 'knex';
import type { Config } from '../common/config.js';
import { listen } from '../common/http.js';
import type { Logger } from '../common/log.js';
import type { Running } from '../common/service.js';
import { createPoliciesApp } from './app.js';
import { batchedDecisionLog } from './decision-log.js';

export async function startPolicies(config: Config, log: Logger, knex: Knex, adminToken: string, internalSecret: string): Promise<Running> {
  const decisionLog = batchedDecisionLog(knex, log);
  const http = await listen(config.PDP_PORT);
  http.server.on('request', createPoliciesApp({ knex, adminToken, internalSecret, log, decisionLog }));
  return {
    url: http.url,
    async close() {
      await http.close();
      await decisionLog.close();
    },
  };
}
