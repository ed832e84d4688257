// Gateway: the only public entry to the API, assembled from the gateway file (gateway-file.ts): the request-id plugin
// runs before routing; each route then passes through the file's plugins in the declared order, and is forwarded to
// its upstream (proxy.ts). OPTIONS is a CORS preflight on routes with the cors plugin, otherwise 404.
import express, { type RequestHandler } from 'express';
import type { Pool } from 'undici';
import { errorHandler, notFound } from '../common/http.js';
import { tracedHandler } from '../common/tracing.js';
import type { GatewayDefinition } from './gateway-file.js';
import type { GatewayEnv, PluginInstance, RouteDefinition } from './plugins/plugin.js';
import { loadApiGuide, loadPublicApiDocument } from './openapi-document.js';
import { upstreamProxy } from './proxy.js';

export interface StartedPlugin {
  name: string;
  instance: PluginInstance<unknown>;
  settings: unknown;
  screenBefore?: string | undefined;
}

/** Starts every plugin of the file once, in order; each keeps its own state (key cache, limiter, meter). */
export const startPlugins = (def: GatewayDefinition, env: GatewayEnv): StartedPlugin[] =>
  def.plugins.map(({ plugin, settings }) => ({
    name: plugin.name,
    instance: plugin.start(settings, env),
    settings,
    screenBefore: plugin.screenBefore,
  }));

/**
 * Each plugin's handler, preceded by the screens that run ahead of it (plugin.ts `screenBefore`). Traced, the plugins
 * the file's `tracing.pluginSpans` names are each a span of the request's trace named after the plugin (verify-token,
 * rate-limit, authorize: the PDP call, ...); with `all`, every plugin and screen is.
 */
function routeChain(
  plugins: StartedPlugin[],
  route: RouteDefinition,
  settingsOf: (p: StartedPlugin) => unknown,
  pluginSpans: GatewayDefinition['pluginSpans'],
): RequestHandler[] {
  const listed = new Set(plugins.map((p) => p.name));
  const screenPlace = (p: StartedPlugin) => (p.screenBefore && listed.has(p.screenBefore) ? p.screenBefore : p.name);
  const traced = (name: string, spanned: boolean, handler: RequestHandler) =>
    spanned ? tracedHandler(name, handler) : handler;
  const all = pluginSpans === 'all';
  return plugins.flatMap((p) => [
    ...plugins
      .filter((s) => s.instance.screen && screenPlace(s) === p.name)
      .map((s) => traced(`gateway ${s.name} screen`, all, s.instance.screen!(route, settingsOf(s)))),
    ...(p.instance.handler
      ? [traced(`gateway ${p.name}`, all || pluginSpans.has(p.name), p.instance.handler(route, settingsOf(p)))]
      : []),
  ]);
}

export function createGatewayApp(
  def: GatewayDefinition,
  plugins: StartedPlugin[],
  upstreams: Record<string, Pool>,
  env: GatewayEnv,
): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  for (const p of plugins) if (p.instance.app) app.use(p.instance.app);

  const api = express.Router({ caseSensitive: true, strict: true });
  const openApiJson = JSON.stringify(loadPublicApiDocument());
  api.get('/openapi.json', (_req, res) => void res.type('application/json').send(openApiJson));
  const apiGuide = loadApiGuide();
  api.get('/api-guide.md', (_req, res) => void res.type('text/markdown; charset=utf-8').send(apiGuide));

  const preflights = new Map<string, Map<string, RequestHandler>>();
  for (const { route, settings } of def.routes) {
    const settingsOf = (p: StartedPlugin) => settings[p.name] ?? p.settings;
    const chain = routeChain(plugins, route, settingsOf, def.pluginSpans);
    const upstream = def.upstreams[route.upstream]!;
    const forward = upstreamProxy(upstreams[route.upstream]!, {
      internalSecret: env.internalSecret,
      timeoutMs: upstream.timeoutMs,
      log: env.log,
    });
    // Express answers HEAD with the GET route (decisions.md: HEAD is GET without a body).
    api[route.method.toLowerCase() as 'get' | 'put' | 'delete'](route.path, ...chain, forward);
    for (const p of plugins) {
      const preflight = p.instance.preflight?.(route, settingsOf(p));
      if (preflight) preflights.set(route.path, (preflights.get(route.path) ?? new Map()).set(route.method, preflight));
    }
  }
  const preflight = express.Router({ caseSensitive: true, strict: true });
  for (const [path, byMethod] of preflights)
    preflight.options(path, (req, res, next) =>
      (byMethod.get(req.get('access-control-request-method') ?? '') ?? notFound)(req, res, next),
    );
  // Only the file's methods exist; any other OPTIONS gets the same 404 as an unknown route, not a method list.
  const options = express.Router().use('/v1', preflight).use(notFound);
  // Other methods skip the preflight routes (matching a path against each costs on every API call).
  app.use((req, res, next) => (req.method === 'OPTIONS' ? options(req, res, next) : next()));
  app.use('/v1', api);
  app.use(notFound);
  app.use(errorHandler(env.log));
  return app;
}
