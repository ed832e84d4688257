// Brute-force protection for credential checks (issue 20; Keycloak's brute-force detection, NIST SP 800-63B §5.2.2):
// failed attempts are counted per subject (the username or key tried, whether or not it exists, so the answer never
// tells) and per source address. Past either budget the caller waits for the window to end, before any password hash
// is computed; a success clears the subject's count (consecutive failures), so the real person gets in once the wait
// is over even while someone keeps guessing from elsewhere.
import { retryAfterSeconds, type LimiterStore } from './rate-limit-store.js';
import type { RateLimitWindow } from '../wire/decision.js';

export interface ThrottleLimits {
  /** Consecutive failures of one subject within the window; none: subjects are not counted, only addresses. */
  perSubject?: RateLimitWindow;
  /** Failures from one address within the window (higher: an office or a proxy shares one). */
  perAddress: RateLimitWindow;
}

export const SIGN_IN_LIMITS = {
  perSubject: { points: 10, durationS: 900 },
  perAddress: { points: 100, durationS: 900 },
} satisfies ThrottleLimits;

/**
 * Admin credentials (operator token, tenant admin keys) are random secrets no one can guess online, so they are
 * throttled per address only, and only once found wrong (wrongCredential): a per-key lockout would let anyone who saw
 * a key id lock its holder out, and a check before the credential's own would let anyone behind the same address
 * (a proxy, a NAT) lock the operator out (issue 32).
 */
export const adminCredentialLimits = (failuresPerAddress: number): ThrottleLimits => ({
  perAddress: { points: failuresPerAddress, durationS: 900 },
});

/** What a throttled sign-in is told: to wait, and for how long; never whether the username exists. */
export const waitMessage = (retryAfterS: number) =>
  `Too many sign-in attempts. Wait ${Math.ceil(retryAfterS / 60)} minute${retryAfterS > 60 ? 's' : ''} and try again.`;

export interface CredentialThrottle {
  /** Seconds to wait before this subject or address may try again; undefined when it may try now. */
  waitSeconds(subject: string | undefined, address: string): Promise<number | undefined>;
  failed(subject: string | undefined, address: string): Promise<void>;
  succeeded(subject: string | undefined): Promise<void>;
}

export function credentialThrottle(
  store: LimiterStore,
  name: string,
  limits: ThrottleLimits = SIGN_IN_LIMITS,
): CredentialThrottle {
  const perSubject = limits.perSubject && store.limiter(`${name}:subject`, limits.perSubject);
  const perAddress = store.limiter(`${name}:address`, limits.perAddress);
  const subjectKey = (subject: string) => subject.trim().toLowerCase().slice(0, 200);
  const spent = async (limiter: typeof perAddress, key: string) => {
    const state = await limiter.get(key);
    return state && state.remainingPoints <= 0 ? state.msBeforeNext : undefined;
  };
  return {
    async waitSeconds(subject, address) {
      const [bySubject, byAddress] = await Promise.all([
        subject && perSubject ? spent(perSubject, subjectKey(subject)) : undefined,
        spent(perAddress, address),
      ]);
      const waitMs = Math.max(bySubject ?? 0, byAddress ?? 0);
      return waitMs > 0 ? retryAfterSeconds(waitMs) : undefined;
    },
    async failed(subject, address) {
      // Over the budget shows on the next attempt; a store failure must not turn a refusal into an error.
      await Promise.all([subject && perSubject?.consume(subjectKey(subject)), perAddress.consume(address)]).catch(
        () => undefined,
      );
    },
    async succeeded(subject) {
      if (subject && perSubject) await perSubject.delete(subjectKey(subject)).catch(() => undefined);
    },
  };
}

/**
 * A credential found wrong, from `address`: the seconds it is told to wait when the address's budget is spent,
 * else undefined once counted. For secrets checked in microseconds, which are checked before this, so a right one
 * never waits on others' failures.
 */
export async function wrongCredential(throttle: CredentialThrottle, address: string): Promise<number | undefined> {
  const waitS = await throttle.waitSeconds(undefined, address);
  if (waitS === undefined) await throttle.failed(undefined, address);
  return waitS;
}
