// One request to the issuer's token endpoint, as a form post, tagged so the token endpoint's latency is its own metric.
import http from 'k6/http';
import { sleep } from 'k6';
import { AUTH_URL } from './settings.ts';

export interface TokenResponse {
  access_token: string;
  refresh_token?: string;
  expires_in: number;
  scope: string;
}

/** How often a 429 (the endpoint's own limit, or a short outage) is waited out before the answer is returned. */
const MAX_WAITS = 3;

export const form = (fields: Record<string, string>) =>
  Object.entries(fields)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join('&');

/** Seconds a 429 or 503 asks to wait (retry-after), at least 1. */
export const retryAfterOf = (headers: Record<string, string>) => Math.max(1, Number(headers['Retry-After']) || 1);

/**
 * Non-200 answers are the caller's to judge (a refused grant). A 429 is waited out as its retry-after says, up to
 * MAX_WAITS times, unless `waitOnLimit` is false (tokens.k6.ts counts the limit's refusals itself); it is an expected
 * answer, not a failed request.
 */
export function tokenRequest(
  fields: Record<string, string>,
  waitOnLimit = true,
): { status: number; body: TokenResponse | { error: string } } {
  for (let wait = 0; ; wait++) {
    const res = http.post(`${AUTH_URL}/oauth2/token`, form(fields), {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      tags: { endpoint: 'token', grant: fields.grant_type ?? '' },
      responseCallback: http.expectedStatuses(200, 429),
    });
    if (res.status !== 429 || !waitOnLimit || wait === MAX_WAITS) {
      return { status: res.status, body: res.json() as unknown as TokenResponse | { error: string } };
    }
    sleep(retryAfterOf(res.headers));
  }
}
