import type { Knex } from 'knex';
import type { Config } from '../common/config.js';
import { listen } from '../common/http.js';
import type { Logger } from '../common/log.js';
import type { Running } from '../common/service.js';
import { createBackendApp } from './app.js';

export async function startBackend(config: Config, log: Logger, knex: Knex, internalSecret: string): Promise<Running> {
  const http = await listen(config.BACKEND_PORT);
  http.server.on('request', createBackendApp({ knex, internalSecret, log }));
  return http;
}
