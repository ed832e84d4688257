// The one shape of "it worked, or it was refused" wherever a failure is returned rather than thrown: the admin
// operations (API, console and CLI alike), token verification, the PDP client, schema compilation. A refusal carries
// one of the contract's codes (narrowed to the ones a function can give), a human message, and when waiting helps,
// how long (retry-after).
import { STATUS_OF, type ApiErrorCode } from './codes.js';

export type Refusal<E extends ApiErrorCode = ApiErrorCode> = {
  ok: false;
  error: E;
  message?: string;
  retryAfterS?: number;
  /** The HTTP status when it is not the code's usual one (STATUS_OF): 412 for an admin If-Match mismatch. */
  status?: number;
};
export type Outcome<T, E extends ApiErrorCode = ApiErrorCode> = { ok: true; value: T } | Refusal<E>;

export const done = <T>(value: T): { ok: true; value: T } => ({ ok: true, value });
export const refused = <E extends ApiErrorCode>(error: E, message?: string, retryAfterS?: number): Refusal<E> => ({
  ok: false,
  error,
  ...(message && { message }),
  ...(retryAfterS !== undefined && { retryAfterS }),
});

/** The HTTP status a refusal is answered with: its own when it names one, else its code's. */
export const refusalStatus = (r: Refusal): number => r.status ?? STATUS_OF[r.error];
