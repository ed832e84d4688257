// Backend: the domain service behind the gateway. It answers only calls carrying a context the gateway signed for them.
import express, { type Response } from 'express';
import type { Knex } from 'knex';
import { errorHandler, notFound, requestId, requestIdOf, sendProblem, noteCaller } from '../common/http.js';
import type { Logger } from '../common/log.js';
import { CONTEXT_HEADER, CONTEXT_MAC_HEADER, contextVerifier, type CallContext } from '../common/internal-context.js';
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
  const verifyContext = contextVerifier(internalSecret);
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(requestId);
  app.use((req, res, next) => {
    const context = verifyContext(
      { context: req.get(CONTEXT_HEADER), mac: req.get(CONTEXT_MAC_HEADER) },
      { requestId: requestIdOf(res), method: req.method, path: req.originalUrl },
    );
    if (!context) return sendProblem(res, 'forbidden', { message: 'internal service' });
    res.locals.context = context;
    noteCaller(res, { tenant: context.tenantId, client: context.clientId });
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
