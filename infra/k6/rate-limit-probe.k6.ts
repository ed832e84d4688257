// Finds the rate limit and checks how it is reported (contract 7.2, 8): sends GET /me faster than the account
// layer allows and expects 429 `rate_limited` with an integer retry-after >= 1, the Problem's requestId equal to
// x-request-id, and x-ratelimit-remaining counting down on the successful reads before it.
//   k6 run -e ACCESS_TOKEN="$(npm run -s demo-token)" -e RATE=50 -e DURATION=30s infra/k6/rate-limit-probe.k6.ts
import http from 'k6/http';
import { check } from 'k6';
import { Counter } from 'k6/metrics';
import type { Options } from 'k6/options';
import { BASE_URL, arrivalRate } from './lib/settings.ts';
import { accessToken, bearer } from './lib/tokens.ts';

export const options: Options = {
  scenarios: { probe: arrivalRate() },
  thresholds: {
    rate_limited: ['count>0'],
    malformed_429: ['count<1'],
    'checks{check:remaining}': ['rate==1'],
  },
};

const limited = new Counter('rate_limited');
const malformed = new Counter('malformed_429');

export function setup() {
  return { token: accessToken() };
}

export default function ({ token }: { token: string }): void {
  const res = http.get(`${BASE_URL}/me`, { headers: bearer(token), tags: { endpoint: 'me' }, responseCallback: http.expectedStatuses(200, 429) });
  if (res.status === 200) {
    check(res, { remaining: (r) => /^\d+$/.test(String(r.headers['X-Ratelimit-Remaining'])) }, { check: 'remaining' });
    return;
  }
  limited.add(1);
  const problem = res.json() as { error?: string; requestId?: string };
  const wellFormed = check(res, {
    '429: rate_limited': () => problem.error === 'rate_limited',
    '429: retry-after >= 1': (r) => /^[1-9]\d*$/.test(String(r.headers['Retry-After'])),
    '429: requestId = x-request-id': (r) => problem.requestId === r.headers['X-Request-Id'],
  });
  if (!wellFormed) malformed.add(1);
}
