// Gateway: the only public entry to the API. Route table + filter chain (see pipeline.ts) in front of the backend.
import express from 'express';
import { errorHandler, notFound, requestId } from '../common/http.js';
import type { Logger } from '../common/log.js';
import { ROUTES } from './routes.js';
import { routeHandler, type PipelineDeps } from './pipeline.js';
import { loadPublicApiDocument } from './openapi-document.js';

export function createGatewayApp(deps: PipelineDeps & { log: Logger }): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(requestId);
  // Only the route table's methods exist; an OPTIONS probe gets the same 404 as any unknown route, not a method list.
  app.options('/{*path}', notFound);

  const api = express.Router({ caseSensitive: true, strict: true });
  const openApiJson = JSON.stringify(loadPublicApiDocument());
  api.get('/openapi.json', (_req, res) => void res.type('application/json').send(openApiJson));
  for (const route of ROUTES) {
    const method = route.method.toLowerCase() as 'get' | 'put' | 'delete';
    const body = route.method === 'PUT' ? [express.raw({ type: () => true, limit: '64kb' })] : [];
    api[method](route.path, ...body, routeHandler(route, deps));
  }
  app.use('/v1', api);

  app.use(notFound);
  app.use(errorHandler(deps.log));
  return app;
}
