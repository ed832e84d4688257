// The precondition headers of PUT and DELETE (contract §4.7, §4.8). A header that breaks its pattern never counts
// as a usable precondition, so the request is 428 rather than a write with a guessed meaning (docs/decisions.md).
const QUOTED_ETAG = /^"[^"]+"$/;

export type PutPrecondition = { create: true } | { create: false; ifMatch: string };
/** `*` deletes whatever version is current. */
export type DeletePrecondition = { ifMatch: string | '*' };

/** Exactly one of `If-None-Match: *` (create) and `If-Match: "<etag>"` (update); anything else is undefined → 428. */
export function putPrecondition(
  ifMatch: string | undefined,
  ifNoneMatch: string | undefined,
): PutPrecondition | undefined {
  if (ifMatch !== undefined && ifNoneMatch !== undefined) return undefined;
  if (ifNoneMatch !== undefined) return ifNoneMatch === '*' ? { create: true } : undefined;
  if (ifMatch !== undefined && QUOTED_ETAG.test(ifMatch)) return { create: false, ifMatch };
  return undefined;
}

/** `If-Match: "<etag>"` or `*`; If-None-Match is ignored on DELETE. Missing or malformed is undefined → 428. */
export function deletePrecondition(ifMatch: string | undefined): DeletePrecondition | undefined {
  if (ifMatch === '*' || (ifMatch !== undefined && QUOTED_ETAG.test(ifMatch))) return { ifMatch };
  return undefined;
}
