// Every knob of the k6 scenarios, from `-e NAME=value` (or the environment). README.md beside this file lists them.
export const BASE_URL = (__ENV.BASE_URL ?? 'http://127.0.0.1:8080/v1').replace(/\/+$/, '');
export const AUTH_URL = (__ENV.AUTH_URL ?? 'http://127.0.0.1:3000').replace(/\/+$/, '');
/** constant | ramping | soak: the load profile (scenarios.ts). */
export const PROFILE = __ENV.PROFILE ?? 'constant';
/** Iterations per second: the constant rate, the ramp's peak, and (halved) the soak's rate unless SOAK_RATE is set. */
export const RATE = Number(__ENV.RATE ?? 2);
export const DURATION = __ENV.DURATION ?? '60s';
export const RAMP = __ENV.RAMP ?? '30s';
export const SOAK_RATE = Number(__ENV.SOAK_RATE ?? Math.max(1, Math.floor(RATE / 2)));
/** Longer than an access token lives (15 minutes), so the soak shows every VU renewing its tokens. */
export const SOAK_DURATION = __ENV.SOAK_DURATION ?? '20m';
export const MAX_VUS = Number(__ENV.MAX_VUS ?? 100);
/** Thresholds: the run fails when more than this share of requests fail, or a latency percentile exceeds its bound. */
export const MAX_ERROR_RATE = Number(__ENV.MAX_ERROR_RATE ?? 0.01);
export const P95_MS = Number(__ENV.P95_MS ?? 50);
export const P99_MS = Number(__ENV.P99_MS ?? 4 * P95_MS);
/** Where handleSummary writes the run's JSON summary (beside the text summary on stdout). */
export const SUMMARY_DIR = (__ENV.SUMMARY_DIR ?? '.').replace(/\/+$/, '');

/** A setting the scenario cannot run without: stops the run at once with what to pass. */
export function required(name: string, value: string, hint: string): string {
  if (!value) throw new Error(`set ${name} (-e ${name}=...): ${hint}`);
  return value;
}
