// Read mix through the gateway at a constant arrival rate: GET /me and /tenant always; with PERSON_IDS the person
// and the app's extension list; with EXTENSION_ID one extension (404 is a valid answer when no record exists).
//   k6 run -e ACCESS_TOKEN="$(npm run -s demo-token)" -e PERSON_ID=psn_... -e EXTENSION_ID=demo_notes infra/k6/api-read.k6.ts
import http from 'k6/http';
import { check } from 'k6';
import { Counter, Trend } from 'k6/metrics';
import type { Options } from 'k6/options';
import { BASE_URL, EXTENSION_ID, MAX_ERROR_RATE, P95_MS, PERSON_IDS, arrivalRate } from './lib/settings.ts';
import { accessToken, bearer } from './lib/tokens.ts';

export const options: Options = {
  scenarios: { reads: arrivalRate() },
  thresholds: {
    http_req_failed: [`rate<${MAX_ERROR_RATE}`],
    'http_req_duration{endpoint:me}': [`p(95)<${P95_MS}`],
    'http_req_duration{endpoint:tenant}': [`p(95)<${P95_MS}`],
    rate_limited: ['count<1'],
  },
};

const rateLimited = new Counter('rate_limited');
const remaining = new Trend('ratelimit_remaining');

export function setup() {
  return { token: accessToken() };
}

/** The reads one iteration makes, with the statuses that count as success for each. */
function reads(): { endpoint: string; path: string; ok: number[] }[] {
  const person = PERSON_IDS.length ? PERSON_IDS[Math.floor(Math.random() * PERSON_IDS.length)] : undefined;
  return [
    { endpoint: 'me', path: '/me', ok: [200] },
    { endpoint: 'tenant', path: '/tenant', ok: [200] },
    ...(person ? [
      { endpoint: 'person', path: `/persons/${person}`, ok: [200] },
      { endpoint: 'extensions', path: `/persons/${person}/extensions?limit=20`, ok: [200] },
      ...(EXTENSION_ID ? [{ endpoint: 'extension', path: `/persons/${person}/extensions/${EXTENSION_ID}`, ok: [200, 404] }] : []),
    ] : []),
  ];
}

export default function ({ token }: { token: string }): void {
  for (const { endpoint, path, ok } of reads()) {
    const res = http.get(`${BASE_URL}${path}`, { headers: bearer(token), tags: { endpoint }, responseCallback: http.expectedStatuses(...ok) });
    if (res.status === 429) rateLimited.add(1);
    const left = res.headers['X-Ratelimit-Remaining'];
    if (left !== undefined) remaining.add(Number(left));
    check(res, {
      [`${endpoint}: ${ok.join(' or ')}`]: (r) => ok.includes(r.status),
      [`${endpoint}: x-request-id`]: (r) => Boolean(r.headers['X-Request-Id']),
    });
  }
}
