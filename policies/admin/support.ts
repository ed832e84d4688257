// What every admin handler shares: request validation answered as Problems.
import type { Response } from 'express';
import { z } from 'zod';
import { sendProblem } from '../../common/http.js';
import { isUniqueViolation } from '../../common/db.js';

/** Parses `value` with `schema`; on failure answers 422 schema_invalid naming the fields and returns undefined. */
export function parse<T extends z.ZodType>(schema: T, value: unknown, res: Response): z.output<T> | undefined {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const message = result.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ');
  sendProblem(res, 'schema_invalid', { message });
  return undefined;
}

export const LABEL = z.string().regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/).max(40);
export const DISPLAY_NAME = z.string().trim().min(1).max(200);
export const PLAN = z.enum(['L1', 'L2']);

/** Runs `create`; a unique-key clash becomes 409 already_exists with `message` (and `create` answers nothing). */
export async function createOrConflict(res: Response, message: string, create: () => Promise<void>): Promise<void> {
  try {
    await create();
  } catch (err) {
    if (isUniqueViolation(err)) return sendProblem(res, 'already_exists', { message });
    throw err;
  }
}
