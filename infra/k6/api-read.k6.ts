// k6 load script: GET /v1/me and /v1/tenant through the gateway at a constant arrival rate.
//   k6 run -e BASE_URL=http://127.0.0.1:8080/v1 -e ACCESS_TOKEN="$(npm run -s demo-token)" infra/k6/api-read.k6.ts
// The token must carry svc.profile.self.read and svc.tenant.info.read and lives 15 minutes; keep runs shorter, or
// raise the tenant's rate limits first (PATCH /admin/v1/tenants/{id} rateLimit) so the run measures the path.
import http from 'k6/http';
import { check } from 'k6';
import { Counter, Trend } from 'k6/metrics';
import type { Options } from 'k6/options';

const BASE_URL = __ENV.BASE_URL ?? 'http://127.0.0.1:8080/v1';
const TOKEN = __ENV.ACCESS_TOKEN;
if (!TOKEN) throw new Error('set ACCESS_TOKEN (npm run -s demo-token prints one for the npm start demo)');

export const options: Options = {
  scenarios: {
    reads: {
      executor: 'constant-arrival-rate',
      rate: Number(__ENV.RATE ?? 200),
      timeUnit: '1s',
      duration: __ENV.DURATION ?? '60s',
      preAllocatedVUs: 50,
      maxVUs: 200,
    },
  },
  thresholds: {
    http_req_failed: ['rate<0.01'],
    'http_req_duration{endpoint:me}': ['p(95)<50'],
    'http_req_duration{endpoint:tenant}': ['p(95)<50'],
  },
};

const rateLimited = new Counter('rate_limited');
const remaining = new Trend('ratelimit_remaining');

export default function (): void {
  const params = { headers: { authorization: `Bearer ${TOKEN}` } };
  for (const [endpoint, path] of [['me', '/me'], ['tenant', '/tenant']] as const) {
    const res = http.get(`${BASE_URL}${path}`, { ...params, tags: { endpoint } });
    if (res.status === 429) rateLimited.add(1);
    const left = res.headers['X-Ratelimit-Remaining'];
    if (left !== undefined) remaining.add(Number(left));
    check(res, {
      [`${endpoint}: 200`]: (r) => r.status === 200,
      [`${endpoint}: x-request-id`]: (r) => Boolean(r.headers['X-Request-Id']),
    });
  }
}
