// Backend: the domain service behind the gateway. It answers only calls carrying the gateway's secret and context.
import express, { type Response } from 'express';
import type { Knex } from 'knex';
import { errorHandler, notFound, requestId, sendProblem } from '../common/http.js';
import type { Logger } from '../common/log.js';
import { CONTEXT_HEADER, INTERNAL_SECRET_HEADER, decodeContext, type CallContext } from '../common/internal-context.js';
import { knexRepository } from './repository.js';
import { meOf, tenantOf } from './resources.js';
import { personResourcesRouter } from './persons.js';

export interface BackendDeps {
  knex: Knex;
  internalSecret: string;
  log: Logger;
}

const contextOf = (res: Response) => res.locals.context as CallContext;

export function createBackendApp({ knex, internalSecret, log }: BackendDeps): express.Express {
  const repo = knexRepository(knex);
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(requestId);
  app.use((req, res, next) => {
    const context = decodeContext({ secret: req.get(INTERNAL_SECRET_HEADER), context: req.get(CONTEXT_HEADER) }, internalSecret);
    if (!context) return sendProblem(res, 'forbidden', { message: 'internal service' });
    res.locals.context = context;
    next();
  });

  app.get('/v1/me', (_req, res) => void res.json(meOf(contextOf(res))));
  app.get('/v1/tenant', async (_req, res) => {
    const tenant = await repo.tenant(contextOf(res).tenantId);
    if (!tenant) return sendProblem(res, 'not_found');
    res.json(tenantOf(tenant));
  });
  // Cursors are authenticated with a key derived from the deployment's internal secret (see list-cursor.ts).
  app.use(personResourcesRouter(knex, internalSecret));

  app.use(notFound);
  app.use(errorHandler(log));
  return app;
}
