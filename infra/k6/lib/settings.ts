// Every knob of the k6 scenarios, from `-e NAME=value` (or the environment). README.md beside this file lists them.
export const BASE_URL = (__ENV.BASE_URL ?? 'http://127.0.0.1:8080/v1').replace(/\/+$/, '');
export const AUTH_URL = (__ENV.AUTH_URL ?? 'http://127.0.0.1:3000').replace(/\/+$/, '');
export const RATE = Number(__ENV.RATE ?? 50);
export const DURATION = __ENV.DURATION ?? '60s';
export const MAX_VUS = Number(__ENV.MAX_VUS ?? 200);
/** Thresholds: the run fails when more than this share of requests fail, or the p95 latency exceeds P95_MS. */
export const MAX_ERROR_RATE = Number(__ENV.MAX_ERROR_RATE ?? 0.01);
export const P95_MS = Number(__ENV.P95_MS ?? 50);
/** The person whose data the person and extension requests address (the demo person for `npm start`). */
export const PERSON_IDS = (__ENV.PERSON_IDS ?? __ENV.PERSON_ID ?? '').split(',').map((s) => s.trim()).filter(Boolean);
/** An extension registered for the token's app (for `npm start`, the demo extension whose id it prints). */
export const EXTENSION_ID = __ENV.EXTENSION_ID ?? '';

/** A setting the scenario cannot run without: stops the run at once with what to pass. */
export function required(name: string, value: string, hint: string): string {
  if (!value) throw new Error(`set ${name} (-e ${name}=...): ${hint}`);
  return value;
}

/** The constant-arrival-rate scenario every script uses, so runs compare across scripts. */
export const arrivalRate = (rate = RATE) => ({
  executor: 'constant-arrival-rate' as const,
  rate,
  timeUnit: '1s',
  duration: DURATION,
  preAllocatedVUs: Math.min(50, MAX_VUS),
  maxVUs: MAX_VUS,
});
