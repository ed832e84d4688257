// `npm run bench`: the baselines, each run as its own process (`node --import tsx bench/baselines.ts <role>`):
//   bare   B0: node:http answering a small JSON body, nothing else
//   proxy  B2: a pass-through proxy on the gateway's own HTTP stack (Express, gateway/proxy.ts over
//          gateway/upstream.ts' undici pool, the signed call context) in front of the backend, with no checks: the
//          claims and the decision the plugins would have produced are fixed (BENCH_PROXY_STATE)
//   oidc   oidc-provider with its in-memory adapter and the issuer's token format (ES256 JWT access tokens for one
//          resource, strictly rotated refresh tokens); BENCH_OIDC_CHAINS refresh tokens are minted at start (T0), and
//          a confidential client with a secret gets client_credentials grants by HTTP Basic (C0)
// Each listens on PORT and reports { url, tokens?, clientId, machine? } over IPC once it is ready.
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import express from 'express';
import { generateKeyPair, exportJWK } from 'jose';
import Provider, { type ClientMetadata } from 'oidc-provider';
import { createLogger } from '../common/log.js';
import { upstreamProxy } from '../gateway/proxy.js';
import { upstreamPool } from '../gateway/upstream.js';
import type { RequestState } from '../gateway/plugins/plugin.js';

const port = Number(process.env.PORT);
const url = `http://127.0.0.1:${port}`;

function bare(): http.RequestListener {
  return (_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end('{"ok":true}');
  };
}

function proxy(): http.RequestListener {
  const state = JSON.parse(process.env.BENCH_PROXY_STATE!) as Omit<RequestState, 'requestId'>;
  const upstream = upstreamPool(process.env.BACKEND_URL!);
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  let n = 0;
  app.use((_req, res, next) => {
    Object.assign(res.locals, { ...state, requestId: `bench-proxy-${++n}` });
    next();
  });
  app.use(
    upstreamProxy(upstream, {
      internalSecret: process.env.INTERNAL_SECRET!,
      timeoutMs: 5000,
      log: createLogger('bench-proxy', 'warn'),
    }),
  );
  return app;
}

const RESOURCE = 'https://api.bench.invalid';
/** A public client, as the bench's app on the product is. */
const CLIENT = {
  client_id: 'bench',
  token_endpoint_auth_method: 'none',
  redirect_uris: ['http://127.0.0.1/cb'],
  grant_types: ['authorization_code', 'refresh_token'],
} as const;
/** A confidential machine client, as C1's is on the product (client_secret_basic, client_credentials). */
const MACHINE = {
  client_id: 'bench-machine',
  client_secret: randomBytes(32).toString('base64url'),
  token_endpoint_auth_method: 'client_secret_basic',
  redirect_uris: ['http://127.0.0.1/cb'],
  grant_types: ['client_credentials'],
  response_types: [],
} satisfies ClientMetadata;

async function oidc(): Promise<{ listener: http.RequestListener; tokens: string[] }> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const provider = new Provider(url, {
    clients: [{ ...CLIENT, redirect_uris: [...CLIENT.redirect_uris], grant_types: [...CLIENT.grant_types] }, MACHINE],
    jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: 'bench', alg: 'ES256', use: 'sig' }] as never },
    clientDefaults: { id_token_signed_response_alg: 'ES256' },
    enabledJWA: { idTokenSigningAlgValues: ['ES256'] },
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
    issueRefreshToken: async () => true,
    rotateRefreshToken: true,
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => RESOURCE,
        useGrantedResource: async () => true,
        getResourceServerInfo: async () => ({
          scope: 'read',
          audience: 'bench-api',
          accessTokenFormat: 'jwt',
          accessTokenTTL: 900,
          jwt: { sign: { alg: 'ES256' } },
        }),
      },
    },
    ttl: {
      AccessToken: 900,
      ClientCredentials: 900,
      AuthorizationCode: 60,
      RefreshToken: 86_400,
      Grant: 90_000,
      Session: 3600,
      Interaction: 3600,
      IdToken: 3600,
    },
  });
  // One refresh chain per connection, as an authorization code exchange would have left them.
  const client = await provider.Client.find(CLIENT.client_id);
  const tokens: string[] = [];
  for (let i = 0; i < Number(process.env.BENCH_OIDC_CHAINS ?? 10); i++) {
    const grant = new provider.Grant({ accountId: `acc-${i}`, clientId: CLIENT.client_id });
    grant.addResourceScope(RESOURCE, 'read');
    const grantId = await grant.save();
    const token = new provider.RefreshToken({
      accountId: `acc-${i}`,
      client: client!,
      grantId,
      scope: 'read',
      resource: RESOURCE,
      gty: 'authorization_code',
      iiat: Math.floor(Date.now() / 1000),
      expiresWithSession: false,
    } as never);
    tokens.push(await token.save());
  }
  return { listener: provider.callback(), tokens };
}

const role = process.argv[2];
const { listener, tokens } =
  role === 'oidc' ? await oidc() : { listener: role === 'proxy' ? proxy() : bare(), tokens: undefined };
const server = http.createServer(listener);
const machine = { clientId: MACHINE.client_id, clientSecret: MACHINE.client_secret };
server.listen(port, '127.0.0.1', () => process.send!({ url, tokens, clientId: CLIENT.client_id, machine }));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
