// The load profiles every script offers (PROFILE): a constant arrival rate, a ramp up to it and down, and a soak at
// half of it for longer than a token lives. Each scenario carries its own thresholds, keyed by its name, so one
// script's profiles are judged each by its own bounds.
import type { Scenario } from 'k6/options';
import './pool-metrics.ts'; // the pool's counters, which every scenario's thresholds name
import {
  DURATION,
  MAX_ERROR_RATE,
  MAX_VUS,
  P95_MS,
  P99_MS,
  PROFILE,
  RAMP,
  RATE,
  SOAK_DURATION,
  SOAK_RATE,
} from './settings.ts';

const PROFILES = ['constant', 'ramping', 'soak'] as const;
type Profile = (typeof PROFILES)[number];

function executorOf(profile: Profile): Scenario {
  const vus = { preAllocatedVUs: Math.min(20, MAX_VUS), maxVUs: MAX_VUS, timeUnit: '1s' };
  switch (profile) {
    case 'constant':
      return { executor: 'constant-arrival-rate', rate: RATE, duration: DURATION, ...vus };
    case 'ramping':
      return {
        executor: 'ramping-arrival-rate',
        startRate: 1,
        stages: [
          { target: RATE, duration: RAMP },
          { target: RATE, duration: DURATION },
          { target: 0, duration: RAMP },
        ],
        ...vus,
      };
    case 'soak':
      return { executor: 'constant-arrival-rate', rate: SOAK_RATE, duration: SOAK_DURATION, ...vus };
  }
}

export function profile(): Profile {
  if (!(PROFILES as readonly string[]).includes(PROFILE))
    throw new Error(`PROFILE must be one of ${PROFILES.join(', ')} (got ${PROFILE})`);
  return PROFILE as Profile;
}

/**
 * The scenario `<name>_<profile>` and its thresholds: failed requests (unless refusals are the point), p95 of each
 * endpoint (and p99 on a soak, where the tail is the point), and a token pool that never failed to sign in or refresh.
 */
export function scenarioFor(
  name: string,
  endpoints: string[],
  extra: Record<string, string[]> = {},
  judge = { failedRequests: true },
) {
  const chosen = profile();
  const scenario = `${name}_${chosen}`;
  const thresholds: Record<string, string[]> = {
    ...(judge.failedRequests && { [`http_req_failed{scenario:${scenario}}`]: [`rate<${MAX_ERROR_RATE}`] }),
    [`sign_in_failed{scenario:${scenario}}`]: ['count<1'],
    [`refresh_failed{scenario:${scenario}}`]: ['count<1'],
    ...extra,
  };
  for (const endpoint of endpoints) {
    thresholds[`http_req_duration{scenario:${scenario},endpoint:${endpoint}}`] =
      chosen === 'soak' ? [`p(95)<${P95_MS}`, `p(99)<${P99_MS}`] : [`p(95)<${P95_MS}`];
  }
  return { scenarios: { [scenario]: executorOf(chosen) }, thresholds };
}
