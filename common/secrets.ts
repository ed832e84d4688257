// Stored forms of secrets; only these are kept, never a secret itself. Passwords, which people choose, are hashed
// with scrypt (slow on purpose, against guessing from a stolen table). Secrets the platform generates (client secrets,
// tenant admin keys: 256 random bits) are stored as their SHA-256 digest, checked in microseconds: no guess of 256
// bits succeeds online or offline, so a slow hash would protect nothing and cost every legitimate call (issue 32;
// docs/decisions.md "Platform secrets are stored as SHA-256 digests"). Both are compared in constant time.
import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scryptAsync = promisify(scrypt) as (pw: string, salt: Buffer, len: number, opts: object) => Promise<Buffer>;
const PARAMS = { N: 16384, r: 8, p: 1 };
const KEY_LEN = 32;

/** The stored form of a password: scrypt with a fresh salt. */
export async function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(secret, salt, KEY_LEN, PARAMS);
  return `scrypt$${PARAMS.N}$${PARAMS.r}$${PARAMS.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** A hashing lane is full: the caller answers 503 with retry-after instead of queueing more work. */
export class HashingBusy extends Error {
  readonly retryAfterS = 1;
  constructor(lane: string) {
    super(`${lane} hashing is busy`);
  }
}

/**
 * Checks of presented secrets, each lane with a cap on the scrypt calls running (libuv has 4 threads by default, which
 * file and DNS work share) and on those waiting; past the waiting room a check throws HashingBusy at once, so a flood
 * can neither pile up work without bound nor take every thread from the other lane (issue 20).
 */
export interface HashLane {
  run<T>(work: () => Promise<T>): Promise<T>;
}

export function hashLane(name: string, maxRunning: number, maxWaiting: number): HashLane {
  let running = 0;
  const waiting: (() => void)[] = [];
  return {
    async run(work) {
      if (running < maxRunning) running++;
      else if (waiting.length >= maxWaiting) throw new HashingBusy(name);
      else await new Promise<void>((resolve) => waiting.push(resolve)); // the finishing check hands over its slot
      try {
        return await work();
      } finally {
        const next = waiting.shift();
        if (next) next();
        else running--;
      }
    },
  };
}

/** Sign-in forms: anyone may post them, so they get half the threads and a short queue. */
export const SIGN_IN_HASHING = hashLane('sign-in', 2, 16);
/**
 * Platform secrets still stored with scrypt (written before issue 32): each is checked once more with scrypt, then
 * re-stored as its digest on its first right use; until then their checks stay off the sign-in forms' threads.
 */
const LEGACY_SECRET_HASHING = hashLane('credential', 2, 64);

const digest = (s: string) => createHash('sha256').update(s).digest();
const DIGEST_SCHEME = 'sha256$';

/** The stored form of a secret the platform generated (client secret, tenant admin key). */
export const digestSecret = (secret: string): string => DIGEST_SCHEME + digest(secret).toString('base64url');

/** Whether `stored` is a platform secret in the scrypt form of before issue 32, to be replaced by digestSecret. */
export const isScryptHash = (stored: string): boolean => stored.startsWith('scrypt$');

/**
 * Whether `secret` matches `stored`, in either form: a digest (platform secrets; no lane, no waiting) or an scrypt hash
 * (passwords in `lane`; platform secrets stored before issue 32 in their own lane).
 */
export async function verifySecret(
  secret: string,
  stored: string,
  lane: HashLane = LEGACY_SECRET_HASHING,
): Promise<boolean> {
  if (stored.startsWith(DIGEST_SCHEME)) {
    const expected = Buffer.from(stored.slice(DIGEST_SCHEME.length), 'base64url');
    const given = digest(secret);
    return expected.length === given.length && timingSafeEqual(given, expected);
  }
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await lane.run(() =>
    scryptAsync(secret, Buffer.from(salt, 'base64url'), expected.length, { N: Number(n), r: Number(r), p: Number(p) }),
  );
  return timingSafeEqual(key, expected);
}

/** Constant-time comparison with one secret held in memory (operator token, gateway secret); digests first, so
 *  neither the content nor the length of the expected secret shows in the timing. The expected digest is made once. */
export function secretChecker(expected: string): (given: string) => boolean {
  const expectedDigest = digest(expected);
  return (given) => timingSafeEqual(digest(given), expectedDigest);
}

export const sameSecret = (a: string, b: string): boolean => secretChecker(b)(a);

export const randomSecret = (bytes = 32) => randomBytes(bytes).toString('base64url');
