// One request to the issuer's token endpoint, as a form post, tagged so the token endpoint's latency is its own metric.
import http from 'k6/http';
import { AUTH_URL } from './settings.ts';

export interface TokenResponse {
  access_token: string;
  refresh_token?: string;
  expires_in: number;
  scope: string;
}

export const form = (fields: Record<string, string>) =>
  Object.entries(fields).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');

/** Non-2xx answers are expected here (a 429 from the endpoint's limit, a refused grant): the caller judges them. */
export function tokenRequest(fields: Record<string, string>): { status: number; body: TokenResponse | { error: string } } {
  const res = http.post(`${AUTH_URL}/oauth2/token`, form(fields), {
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    tags: { endpoint: 'token', grant: fields.grant_type ?? '' },
    responseCallback: http.expectedStatuses(200),
  });
  return { status: res.status, body: res.json() as unknown as TokenResponse | { error: string } };
}
