// ETags of admin objects and If-Match on their changes (docs/decisions.md "Admin ETags"). An ETag is a digest of the
// object's canonical JSON as GET answers it: no column or migration, the same on both stores, and it changes exactly
// when something a reader can see changes. A change naming If-Match compares it with the object read under the
// change's row lock, inside the audited transaction, so two admins holding the same ETag cannot both pass.
import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import { canonicalJson } from '../../common/canonical-json.js';
import { refused, type Outcome, type Refusal } from '../../wire/outcome.js';
import { reply } from './support.js';

/** The strong ETag of an object in the state `state` (quoted, as the header carries it). */
export const etagOf = (state: unknown): string =>
  `"${createHash('sha256').update(canonicalJson(state)).digest('base64url').slice(0, 27)}"`;

/** The request's If-Match, or undefined when it sent none (then no precondition applies: today's behaviour). */
export const ifMatchOf = (req: Request): string | undefined => req.get('if-match') ?? undefined;

/**
 * 412 revision_conflict when `ifMatch` is given and names neither `*` nor the ETag of `current` (read under the
 * change's lock); undefined when the change may go ahead.
 */
export function staleUnless(ifMatch: string | undefined, current: unknown): Refusal | undefined {
  if (ifMatch === undefined) return undefined;
  const listed = ifMatch.split(',').map((t) => t.trim());
  if (listed.includes('*') || listed.includes(etagOf(current))) return undefined;
  return {
    ...refused('revision_conflict', 'it changed since the ETag in If-Match was read: read it again, then decide'),
    status: 412,
  };
}

/** Answers like `reply`, with the ETag of the object the answer is about (`stateOf` its value, as GET shows it). */
export function replyTagged<T>(
  res: Response,
  outcome: Outcome<T>,
  stateOf: (value: T) => unknown = (value) => value,
  status = 200,
): void {
  if (outcome.ok) res.setHeader('etag', etagOf(stateOf(outcome.value)));
  reply(res, outcome, status);
}
