// Write mix that uses ETags as the contract requires (4.7, 4.8): create with If-None-Match: *, update with the
// current ETag, and on 409 re-read and try again with the new ETag instead of re-sending blindly; now and then
// delete with If-Match. VUs share records when there are fewer persons than VUs, so conflicts happen and are handled.
//   k6 run -e USERS_FILE=$PWD/load-users.json infra/k6/api-write.k6.ts   (seed-load with --extension <extensionId>)
import http from 'k6/http';
import { check } from 'k6';
import { Counter } from 'k6/metrics';
import type { Options } from 'k6/options';
import { BASE_URL, SUMMARY_DIR, required } from './lib/settings.ts';
import { scenarioFor } from './lib/scenarios.ts';
import { apiCall } from './lib/tokens.ts';
import { APP, PERSON_IDS } from './lib/users.ts';
import { summaryFiles, type SummaryData } from './lib/summary.ts';

const SCHEMA_VERSION = Number(__ENV.SCHEMA_VERSION ?? 1);
const MAX_ATTEMPTS = 5;

const { scenarios, thresholds } = scenarioFor('writes', ['put'], { write_gave_up: ['count<1'] });
export const options: Options = { scenarios, thresholds, summaryTrendStats: ['avg', 'med', 'p(95)', 'p(99)', 'max'] };
export const handleSummary = (data: SummaryData) => summaryFiles('api-write', SUMMARY_DIR, data);

const conflicts = new Counter('write_conflicts');
const gaveUp = new Counter('write_gave_up');

export function setup(): void {
  required('PERSON_IDS', PERSON_IDS.join(','), 'the persons whose extension records to write (a users file has them)');
  required(
    'EXTENSION_ID',
    APP.extensionId,
    'an extension registered for the app (seed-load --extension, or -e EXTENSION_ID)',
  );
}

const recordUrl = (person: string) => `${BASE_URL}/persons/${person}/extensions/${APP.extensionId}`;
/** 409 and 404 are answers this script handles, not failures. */
const handled = http.expectedStatuses(200, 201, 204, 404, 409);

/** The record's current ETag, or undefined when there is none. */
function currentEtag(person: string): string | undefined {
  const res = apiCall('GET', recordUrl(person), null, { tags: { endpoint: 'get' }, responseCallback: handled });
  return res.status === 200 ? (res.headers.Etag as string) : undefined;
}

export default function (): void {
  const person = PERSON_IDS[Math.floor(Math.random() * PERSON_IDS.length)]!;
  const body = JSON.stringify({
    schemaVersion: SCHEMA_VERSION,
    data: { note: `k6 ${__VU}:${__ITER}`, at: Date.now() },
  });
  let etag = currentEtag(person);
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const precondition: Record<string, string> = etag ? { 'if-match': etag } : { 'if-none-match': '*' };
    const res = apiCall('PUT', recordUrl(person), body, {
      headers: { 'content-type': 'application/json', ...precondition },
      tags: { endpoint: 'put' },
      responseCallback: handled,
    });
    if (res.status === 200 || res.status === 201) {
      check(res, { 'put: etag on success': (r) => Boolean(r.headers.Etag) });
      if (Math.random() < 0.1) {
        const del = apiCall('DELETE', recordUrl(person), null, {
          headers: { 'if-match': res.headers.Etag as string },
          tags: { endpoint: 'delete' },
          responseCallback: handled,
        });
        check(del, { 'delete: 204 or 409': (r) => r.status === 204 || r.status === 409 });
      }
      return;
    }
    check(res, { 'put: 409 or 404 when the record moved': (r) => r.status === 409 || r.status === 404 });
    conflicts.add(1);
    // The record changed under us. 409: re-read it (contract 4.7: "to retry safely, re-read first"), so the next PUT
    // is decided on the current record and ETag, never a blind overwrite; 404: it was deleted, so create instead.
    etag = res.status === 409 ? currentEtag(person) : undefined;
  }
  gaveUp.add(1);
}
