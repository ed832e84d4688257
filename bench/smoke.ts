// Smoke check of a running `npm start`: the demo person consents to the demo app in a browser and the app calls
// GET /v1/me through the gateway. Used by .ci/run; exits non-zero on any failure.
// With --print-token (`npm run -s demo-token`) it prints only a fresh demo access token, e.g. for the k6 scripts, and
// with --print-token --refresh-token (`npm run -s demo-token -- --refresh-token`) the refresh token of a new sign-in.
import { loadConfig } from '../common/config.js';
import { DEMO } from '../infra/seed.js';
import { launchBrowser } from '../tests/support/browser.js';
import { obtainTokens } from '../tests/support/oauth.js';

const config = loadConfig();
const clientId = `tp_${DEMO.tenantLabel}_${DEMO.clientSlug}`;
const baseUrl = `http://127.0.0.1:${config.GATEWAY_PORT}/v1`;
const printToken = process.argv.includes('--print-token');
const printRefreshToken = process.argv.includes('--refresh-token');

const browser = await launchBrowser();
const tokens = await obtainTokens(
  browser,
  { authUrl: config.AUTH_URL, clientId, redirectUri: DEMO.redirectUri },
  DEMO,
  DEMO.capabilities.join(' '),
).finally(() => browser.close());

if (printToken) {
  console.log(printRefreshToken ? tokens.refresh_token : tokens.access_token);
} else {
  const res = await fetch(`${baseUrl}/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
  const body = await res.json();
  if (res.status !== 200 || body.clientId !== clientId || body.subjectType !== 'person')
    throw new Error(`GET /v1/me -> ${res.status} ${JSON.stringify(body)}`);
  console.log(`smoke: GET ${baseUrl}/me -> 200 ${JSON.stringify(body)}`);
}
