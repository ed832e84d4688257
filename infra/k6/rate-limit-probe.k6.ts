// Finds the rate limit and checks how it is reported (contract 7.2, 8): sends GET /me faster than the account
// layer allows and expects 429 `rate_limited` with an integer retry-after >= 1, the Problem's requestId equal to
// x-request-id, and x-ratelimit-remaining counting down on the successful reads before it.
// Against npm start's demo as it is (one person, the default limits), every VU shares that person's account budget.
//   k6 run -e RATE=20 -e DURATION=30s infra/k6/rate-limit-probe.k6.ts
import http from 'k6/http';
import { check } from 'k6';
import { Counter } from 'k6/metrics';
import type { Options } from 'k6/options';
import { BASE_URL, SUMMARY_DIR } from './lib/settings.ts';
import { scenarioFor } from './lib/scenarios.ts';
import { apiCall } from './lib/tokens.ts';
import { summaryFiles, type SummaryData } from './lib/summary.ts';

// Refusals are what this script looks for: not failed requests but well-formed 429s are its thresholds.
const { scenarios, thresholds } = scenarioFor(
  'probe',
  [],
  {
    rate_limited: ['count>0'],
    malformed_429: ['count<1'],
    'checks{check:remaining}': ['rate==1'],
  },
  { failedRequests: false },
);
export const options: Options = { scenarios, thresholds };
export const handleSummary = (data: SummaryData) => summaryFiles('rate-limit-probe', SUMMARY_DIR, data);

const limited = new Counter('rate_limited');
const malformed = new Counter('malformed_429');

export default function (): void {
  const res = apiCall('GET', `${BASE_URL}/me`, null, {
    tags: { endpoint: 'me' },
    responseCallback: http.expectedStatuses(200, 429),
  });
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
