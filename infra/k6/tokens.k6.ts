// The token endpoint under load: client_credentials grants at a constant rate (CLIENT_ID + CLIENT_SECRET, with
// ISSUER_ENABLE_CLIENT_CREDENTIALS=true), and with REFRESH_TOKEN one refresh chain with strict rotation, each
// refresh token used once. 429 from the token endpoint's own limit counts separately, with its retry-after.
//   k6 run -e CLIENT_ID=tp_... -e CLIENT_SECRET=... infra/k6/tokens.k6.ts
//   k6 run -e CLIENT_ID=tp_demo_sample-app -e REFRESH_TOKEN="$(npm run -s demo-token -- --refresh-token)" infra/k6/tokens.k6.ts
import { check } from 'k6';
import { Counter } from 'k6/metrics';
import type { Options, Scenario } from 'k6/options';
import { DURATION, MAX_ERROR_RATE, P95_MS, arrivalRate } from './lib/settings.ts';
import { tokenRequest, type TokenResponse } from './lib/tokens.ts';

const scenarios: Record<string, Scenario> = {};
if (__ENV.CLIENT_ID && __ENV.CLIENT_SECRET) scenarios.client_credentials = { ...arrivalRate(), exec: 'clientCredentials' };
// One VU: a refresh chain is sequential by nature (the next refresh needs the last answer).
if (__ENV.CLIENT_ID && __ENV.REFRESH_TOKEN) scenarios.refresh = { executor: 'constant-vus', vus: 1, duration: DURATION, exec: 'refresh' };
if (!Object.keys(scenarios).length) throw new Error('set CLIENT_ID with CLIENT_SECRET (client_credentials) and/or REFRESH_TOKEN (refresh chain)');

export const options: Options = {
  scenarios,
  thresholds: {
    http_req_failed: [`rate<${MAX_ERROR_RATE}`],
    'http_req_duration{endpoint:token}': [`p(95)<${P95_MS * 4}`],
    refresh_chain_broken: ['count<1'],
  },
};

const limited = new Counter('token_rate_limited');
const chainBroken = new Counter('refresh_chain_broken');

export function clientCredentials(): void {
  const { status, body } = tokenRequest({ grant_type: 'client_credentials', client_id: __ENV.CLIENT_ID!, client_secret: __ENV.CLIENT_SECRET!, ...(__ENV.SCOPE && { scope: __ENV.SCOPE }) });
  if (status === 429) return void limited.add(1);
  check(body, {
    'client_credentials: access token': (b) => status === 200 && Boolean((b as TokenResponse).access_token),
    'client_credentials: no refresh token': (b) => !(b as TokenResponse).refresh_token,
  });
}

let refreshToken = __ENV.REFRESH_TOKEN ?? '';
export function refresh(): void {
  if (!refreshToken) return;
  const { status, body } = tokenRequest({ grant_type: 'refresh_token', client_id: __ENV.CLIENT_ID!, refresh_token: refreshToken });
  if (status === 429) return void limited.add(1);
  const ok = check(body, { 'refresh: rotated': (b) => status === 200 && Boolean((b as TokenResponse).refresh_token) });
  if (!ok) {
    chainBroken.add(1);
    refreshToken = '';
    return;
  }
  refreshToken = (body as TokenResponse).refresh_token!;
}
