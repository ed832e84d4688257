// What every admin operation shares: validation, and outcomes the admin API answers as JSON or Problems and the
// admin console renders as pages. Operations return an Outcome instead of writing to a response, so both front ends
// run the same code.
import { Router, type Response } from 'express';
import { z } from 'zod';
import { sendRefusal } from '../../common/http.js';
import { isUniqueViolation } from '../../common/db.js';
import type { Knex } from 'knex';
import { isId } from '../../common/ids.js';
import { done, refused, type Outcome } from '../../wire/outcome.js';

/**
 * A router of admin routes. Case-sensitive, because the authority table (authority.ts) reads the path as written:
 * with Express's default matching, a tenant key's `POST /tenants/{own}/Admin-Keys` would pass the table as one of its
 * tenant's objects and reach the operator-only route.
 */
export const adminRoutes = () => Router({ caseSensitive: true });

/** A refinement's issue whose message already says, in words, what it is about: shown without its field path. */
export const issueInWords = (message: string) => ({ code: 'custom' as const, message, params: { inWords: true } });

/** Parses `value` with `schema`; a failure is schema_invalid naming the fields (or in the issue's own words). */
export function validate<T extends z.ZodType>(schema: T, value: unknown): Outcome<z.output<T>> {
  const result = schema.safeParse(value);
  if (result.success) return done(result.data);
  const said = (i: z.core.$ZodIssue) =>
    i.code === 'custom' && i.params?.inWords ? i.message : `${i.path.join('.') || 'body'}: ${i.message}`;
  return refused('schema_invalid', result.error.issues.map(said).join('; '));
}

/** Answers an outcome: its value as JSON with `status` (204: no body), or its Problem. */
export function reply<T>(res: Response, outcome: Outcome<T>, status = 200): void {
  if (!outcome.ok) return sendRefusal(res, outcome);
  if (status === 204) return void res.status(204).end();
  res.status(status).json(outcome.value);
}

/**
 * Cursor pages in id order: the cursor is the last item's id, opaque to clients (base64url of `kind:id`), so a cursor
 * of one list is refused by another. `query` validates limit (1–100, default 20) and cursor with any filters.
 */
export function idPages(kind: string) {
  const encode = (id: string) => Buffer.from(`${kind}:${id}`).toString('base64url');
  const decode = (cursor: string) => {
    const text = Buffer.from(cursor, 'base64url').toString('utf8');
    return text.startsWith(`${kind}:`) && text.length > kind.length + 1 ? text.slice(kind.length + 1) : undefined;
  };
  /** A cursor of this list, decoded to the last item's id. */
  const cursor = z
    .string()
    .max(64)
    .refine((c) => decode(c) !== undefined, 'not a cursor of this list')
    .transform((c) => decode(c)!);
  const query = <F extends z.ZodRawShape>(filters: F) =>
    z.strictObject({
      limit: z.coerce.number().int().min(1).max(100).default(20),
      cursor: cursor.optional(),
      ...filters,
    });
  /** The page of `rows` (read with limit + 1) and the cursor of the next one. */
  const page = <T>(rows: T[], limit: number, idOf: (row: T) => string) => ({
    items: rows.slice(0, limit),
    nextCursor: rows.length > limit ? encode(idOf(rows[limit - 1]!)) : null,
  });
  return { query, page, cursor };
}

/** True when `tenantId` names a tenant (a malformed id names none). */
export const tenantExists = async (knex: Knex, tenantId: string): Promise<boolean> =>
  isId('ten', tenantId) && (await knex('tenants').where({ id: tenantId }).first('id')) !== undefined;

/** A tenant's request: `input` (query or body) parsed with `schema` (schema_invalid), then its tenant (not_found). */
export async function parseForTenant<T extends z.ZodType>(
  knex: Knex,
  tenantId: string,
  schema: T,
  input: unknown,
): Promise<Outcome<z.output<T>>> {
  const parsed = validate(schema, input);
  if (!parsed.ok) return parsed;
  return (await tenantExists(knex, tenantId)) ? parsed : refused('not_found');
}

/** One page of a list and the cursor of the next (null on the last). */
export type Page<T> = Outcome<{ items: T[]; nextCursor: string | null }>;

export const LABEL = z
  .string()
  .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/)
  .max(40);
export const DISPLAY_NAME = z.string().trim().min(1).max(200);
export const PLAN = z.enum(['L1', 'L2']);

/** Runs `create`; a unique-key clash becomes already_exists with `message`. */
export async function unlessTaken<T>(message: string, create: () => Promise<Outcome<T>>): Promise<Outcome<T>> {
  try {
    return await create();
  } catch (err) {
    if (isUniqueViolation(err)) return refused('already_exists', message);
    throw err;
  }
}

/**
 * Deepest admin request body (and console schema): room for JSON Schemas describing extension data at its own limit
 * (32 levels, two schema levels per data level) and their envelope; far below what overflows a recursive reader.
 */
export const MAX_BODY_DEPTH = 100;
