// Access tokens for the scenarios, obtained the way real clients do:
//   ACCESS_TOKEN (for example from `npm run -s demo-token`, the code flow with PKCE for the demo person), or
//   CLIENT_ID + CLIENT_SECRET: the client_credentials grant (workload tokens; ISSUER_ENABLE_CLIENT_CREDENTIALS=true).
// REFRESH_TOKEN + CLIENT_ID renew a user token with strict rotation: each refresh token is used once.
import http from 'k6/http';
import { AUTH_URL } from './settings.ts';

export interface TokenResponse {
  access_token: string;
  refresh_token?: string;
  expires_in: number;
  scope: string;
}

const form = (fields: Record<string, string>) => Object.entries(fields).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');

export function tokenRequest(fields: Record<string, string>): { status: number; body: TokenResponse | { error: string } } {
  const res = http.post(`${AUTH_URL}/oauth2/token`, form(fields), {
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    tags: { endpoint: 'token', grant: fields.grant_type ?? '' },
  });
  return { status: res.status, body: res.json() as unknown as TokenResponse | { error: string } };
}

/** The access token the scenario uses, from ACCESS_TOKEN or a client_credentials grant. Called in setup(). */
export function accessToken(scope = __ENV.SCOPE ?? ''): string {
  if (__ENV.ACCESS_TOKEN) return __ENV.ACCESS_TOKEN;
  if (__ENV.CLIENT_ID && __ENV.CLIENT_SECRET) {
    const { status, body } = tokenRequest({
      grant_type: 'client_credentials', client_id: __ENV.CLIENT_ID, client_secret: __ENV.CLIENT_SECRET, ...(scope && { scope }),
    });
    if (status !== 200) throw new Error(`client_credentials -> ${status} ${JSON.stringify(body)}`);
    return (body as TokenResponse).access_token;
  }
  throw new Error('set ACCESS_TOKEN (e.g. -e ACCESS_TOKEN="$(npm run -s demo-token)") or CLIENT_ID and CLIENT_SECRET for client_credentials');
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
