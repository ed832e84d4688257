// Starting the gateway: the gateway file is read and validated first (a bad file stops the start with one message),
// then the plugins start in the file's order and the app listens. Closing flushes the plugins (the usage meter).
import { backendUrl, pdpUrl, type Config } from '../common/config.js';
import { serve, type Running, type ServiceDeps } from '../common/service.js';
import { createGatewayApp, startPlugins } from './app.js';
import { DEFAULT_GATEWAY_FILE, loadGatewayFile } from './gateway-file.js';
import { connectRedis } from '../common/rate-limit-store.js';
import { upstreamPool } from './upstream.js';

export interface GatewayTargets {
  authUrl: string;
  pdpUrl: string;
  backendUrl: string;
  internalSecret: string;
}

export const gatewayFileOf = (config: Pick<Config, 'GATEWAY_CONFIG'>) => config.GATEWAY_CONFIG ?? DEFAULT_GATEWAY_FILE;

export async function startGateway({
  config,
  log,
  knex,
  telemetry,
  targets,
}: ServiceDeps & { targets: GatewayTargets }): Promise<Running> {
  const def = loadGatewayFile(gatewayFileOf(config));
  const redis = await connectRedis(config.REDIS_URL, log, telemetry, config.REDIS_CLUSTER);
  const pdp = upstreamPool(targets.pdpUrl);
  let listening: string | undefined;
  const env = {
    authUrl: targets.authUrl,
    pdp,
    internalSecret: targets.internalSecret,
    redis,
    knex,
    log,
    telemetry,
    publicUrl: () => config.GATEWAY_PUBLIC_URL ?? listening,
    listedPlugins: new Set(def.plugins.map((p) => p.plugin.name)),
  };
  const upstreams = Object.fromEntries(
    Object.entries(def.upstreams).map(([name, u]) => [name, upstreamPool(u.url ?? targets.backendUrl)]),
  );
  const plugins = startPlugins(def, env);
  const app = createGatewayApp(def, plugins, upstreams, env);
  const jwksUrl = `${targets.authUrl}/.well-known/jwks.json`;
  telemetry.addReadinessCheck('gateway: issuer key set', async () => {
    const res = await fetch(jwksUrl, { signal: AbortSignal.timeout(1000) });
    await res.body?.cancel();
    if (!res.ok) throw new Error(`${jwksUrl} answered ${res.status}`);
  });
  telemetry.addReadinessCheck('gateway: database', () => knex.raw('select 1'));
  if (redis) telemetry.addReadinessCheck('gateway: redis', () => redis.ping());
  const http = await serve('gateway', config.GATEWAY_PORT, config, telemetry, log, app);
  listening = http.url;
  log.info({ file: def.file, routes: def.routes.length, plugins: plugins.map((p) => p.name) }, 'gateway file loaded');
  return {
    url: `${http.url}/v1`,
    async close() {
      await http.close();
      for (const p of plugins) await p.instance.close?.();
      await Promise.all([pdp.close(), ...Object.values(upstreams).map((u) => u.close())]);
      redis?.disconnect();
    },
  };
}

export const gatewayTargetsFrom = (config: Config, internalSecret: string): GatewayTargets => ({
  authUrl: config.AUTH_URL,
  pdpUrl: pdpUrl(config),
  backendUrl: backendUrl(config),
  internalSecret,
});
