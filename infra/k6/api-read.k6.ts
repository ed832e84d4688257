// Read mix through the gateway: GET /me and /tenant always; with person ids (the users file's, or PERSON_IDS) the
// person and the app's extension list; with an extension id one extension (404 is a valid answer when no record
// exists). Each VU signs in as a user of the pool and keeps its token fresh (lib/tokens.ts).
//   k6 run -e USERS_FILE=$PWD/load-users.json -e RATE=50 infra/k6/api-read.k6.ts
import http from 'k6/http';
import { check } from 'k6';
import { Counter, Trend } from 'k6/metrics';
import type { Options } from 'k6/options';
import { BASE_URL, SUMMARY_DIR } from './lib/settings.ts';
import { scenarioFor } from './lib/scenarios.ts';
import { apiCall } from './lib/tokens.ts';
import { APP, PERSON_IDS } from './lib/users.ts';
import { summaryFiles, type SummaryData } from './lib/summary.ts';

const ENDPOINTS = ['me', 'tenant', 'person', 'extensions', 'extension'];
const { scenarios, thresholds } = scenarioFor('reads', ENDPOINTS, { rate_limited: ['count<1'] });
export const options: Options = { scenarios, thresholds, summaryTrendStats: ['avg', 'med', 'p(95)', 'p(99)', 'max'] };
export const handleSummary = (data: SummaryData) => summaryFiles('api-read', SUMMARY_DIR, data);

const rateLimited = new Counter('rate_limited');
const remaining = new Trend('ratelimit_remaining');

/** The reads one iteration makes, with the statuses that count as success for each. */
function reads(): { endpoint: string; path: string; ok: number[] }[] {
  const person = PERSON_IDS.length ? PERSON_IDS[Math.floor(Math.random() * PERSON_IDS.length)] : undefined;
  return [
    { endpoint: 'me', path: '/me', ok: [200] },
    { endpoint: 'tenant', path: '/tenant', ok: [200] },
    ...(person
      ? [
          { endpoint: 'person', path: `/persons/${person}`, ok: [200] },
          { endpoint: 'extensions', path: `/persons/${person}/extensions?limit=20`, ok: [200] },
          ...(APP.extensionId
            ? [{ endpoint: 'extension', path: `/persons/${person}/extensions/${APP.extensionId}`, ok: [200, 404] }]
            : []),
        ]
      : []),
  ];
}

export default function (): void {
  for (const { endpoint, path, ok } of reads()) {
    const res = apiCall('GET', `${BASE_URL}${path}`, null, {
      tags: { endpoint },
      responseCallback: http.expectedStatuses(...ok),
    });
    if (res.status === 429) rateLimited.add(1);
    const left = res.headers['X-Ratelimit-Remaining'];
    if (left !== undefined) remaining.add(Number(left));
    check(res, {
      [`${endpoint}: ${ok.join(' or ')}`]: (r) => ok.includes(r.status),
      [`${endpoint}: x-request-id`]: (r) => Boolean(r.headers['X-Request-Id']),
    });
  }
}
