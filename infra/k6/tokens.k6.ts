// The token endpoint under load. By default each VU signs in once as a user of the pool and then every iteration
// refreshes its own chain (strict rotation: each refresh token used once, one chain per VU, so chains never race);
// with CLIENT_ID + CLIENT_SECRET every iteration is a client_credentials grant instead
// (ISSUER_ENABLE_CLIENT_CREDENTIALS=true).
// A 429 from the token endpoint's own limit counts separately, with its retry-after.
//   k6 run -e USERS_FILE=$PWD/load-users.json -e RATE=20 infra/k6/tokens.k6.ts
//   k6 run -e CLIENT_ID=tp_... -e CLIENT_SECRET=... infra/k6/tokens.k6.ts
import { check } from 'k6';
import { Counter } from 'k6/metrics';
import type { Options } from 'k6/options';
import { P95_MS, SUMMARY_DIR } from './lib/settings.ts';
import { scenarioFor } from './lib/scenarios.ts';
import { tokenRequest, type TokenResponse } from './lib/token-request.ts';
import { signIn } from './lib/sign-in.ts';
import { signInFailed } from './lib/pool-metrics.ts';
import { APP, userOf } from './lib/users.ts';
import exec from 'k6/execution';
import { summaryFiles, type SummaryData } from './lib/summary.ts';

const CLIENT_CREDENTIALS = Boolean(__ENV.CLIENT_ID && __ENV.CLIENT_SECRET);
const { scenarios, thresholds } = scenarioFor(CLIENT_CREDENTIALS ? 'client_credentials' : 'refresh', [], {
  'http_req_duration{endpoint:token}': [`p(95)<${4 * P95_MS}`],
  refresh_chain_broken: ['count<1'],
});
export const options: Options = { scenarios, thresholds, summaryTrendStats: ['avg', 'med', 'p(95)', 'p(99)', 'max'] };
export const handleSummary = (data: SummaryData) => summaryFiles('tokens', SUMMARY_DIR, data);

const limited = new Counter('token_rate_limited');
const chainBroken = new Counter('refresh_chain_broken');

function clientCredentials(): void {
  const { status, body } = tokenRequest(
    {
      grant_type: 'client_credentials',
      client_id: __ENV.CLIENT_ID!,
      client_secret: __ENV.CLIENT_SECRET!,
      ...(__ENV.SCOPE && { scope: __ENV.SCOPE }),
    },
    false,
  );
  if (status === 429) return void limited.add(1);
  check(body, {
    'client_credentials: access token': (b) => status === 200 && Boolean((b as TokenResponse).access_token),
    'client_credentials: no refresh token': (b) => !(b as TokenResponse).refresh_token,
  });
}

/** This VU's refresh chain (module state is per VU). */
let refreshToken = '';
function refresh(): void {
  if (!refreshToken) {
    try {
      refreshToken = signIn(userOf(exec.vu.idInTest), APP).refresh_token ?? '';
    } catch (err) {
      signInFailed.add(1);
      throw err;
    }
  }
  const { status, body } = tokenRequest(
    { grant_type: 'refresh_token', client_id: APP.clientId, refresh_token: refreshToken },
    false,
  );
  if (status === 429) return void limited.add(1);
  const ok = check(body, { 'refresh: rotated': (b) => status === 200 && Boolean((b as TokenResponse).refresh_token) });
  if (!ok) chainBroken.add(1);
  // A broken chain signs in again at the next iteration.
  refreshToken = ok ? (body as TokenResponse).refresh_token! : '';
}

export default function (): void {
  if (CLIENT_CREDENTIALS) clientCredentials();
  else refresh();
}
