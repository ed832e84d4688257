import type { Router } from 'express';
import { z } from 'zod';
import type { Knex } from 'knex';
import { newId, isId } from '../../common/ids.js';
import { hashSecret } from '../../common/secrets.js';
import { fixedStatement } from '../../common/db.js';
import { foldUsername } from '../../common/usernames.js';
import { adminRoutes, DISPLAY_NAME, idPages, reply, unlessTaken, parseForTenant, type Page } from './support.js';
import { done, refused, type Outcome } from '../../wire/outcome.js';
import { REDACTED, recordChange } from './audit.js';

const CreatePerson = z.strictObject({
  displayName: DISPLAY_NAME,
  username: z.string().trim().min(3).max(100),
  password: z.string().min(8).max(200),
});

const personPages = idPages('psn');
const PersonQuery = personPages.query({
  /** A part of a username or display name, anywhere in it, any case. */
  q: z.string().trim().min(1).max(100).optional(),
  relationship: z.enum(['active', 'ended']).optional(),
});

export interface PersonListItem {
  personId: string;
  accountId: string | null;
  displayName: string;
  username: string | null;
  accountStatus: string | null;
  relationship: 'active' | 'ended';
  createdAt: string;
}

type PersonRow = {
  id: string;
  display_name: string;
  created_at: Date;
  account_id: string | null;
  username: string | null;
  status: string | null;
  ended_at: Date | null;
};

/** The persons the tenant has (or had) a relationship with, each with their login account here. */
const personRows = (knex: Knex, tenantId: string) =>
  knex('tenant_person_relationships as r')
    .join('persons as p', 'p.id', 'r.person_id')
    .leftJoin('accounts as a', (j) =>
      j.on('a.person_id', 'p.id').andOn('a.tenant_id', 'r.tenant_id').andOnVal('a.kind', 'person'),
    )
    .where('r.tenant_id', tenantId)
    .select('p.id', 'p.display_name', 'p.created_at', 'a.id as account_id', 'a.username', 'a.status', 'r.ended_at');

const personItem = (row: PersonRow): PersonListItem => ({
  personId: row.id,
  accountId: row.account_id,
  displayName: row.display_name,
  username: row.username,
  accountStatus: row.status,
  relationship: row.ended_at ? 'ended' : 'active',
  createdAt: new Date(row.created_at).toISOString(),
});

/**
 * A page of the persons the tenant has (or had) a relationship with, in creation order, with their login account
 * here.
 */
export async function personPage(knex: Knex, tenantId: string, query: unknown): Promise<Page<PersonListItem>> {
  const parsed = await parseForTenant(knex, tenantId, PersonQuery, query);
  if (!parsed.ok) return parsed;
  const { limit, cursor, q, relationship } = parsed.value;
  const part = q && `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const rows: PersonRow[] = await personRows(knex, tenantId)
    .modify((b) => {
      if (cursor) b.where('p.id', '>', cursor);
      if (relationship === 'active') b.whereNull('r.ended_at');
      if (relationship === 'ended') b.whereNotNull('r.ended_at');
      // Each side on its own table, so each is served by its trigram index (migration 015) before the join.
      if (part)
        b.whereIn(
          'p.id',
          knex('persons')
            .whereILike('display_name', part)
            .select('id')
            .union((u) =>
              u
                .from('accounts')
                .where({ tenant_id: tenantId, kind: 'person' })
                .whereILike('username', part)
                .select('person_id'),
            ),
        );
    })
    .orderBy('p.id')
    .limit(limit + 1);
  const { items, nextCursor } = personPages.page(rows, limit, (row) => row.id);
  return done({ items: items.map(personItem), nextCursor });
}

/** One person of the tenant, found by their person id or their login account's id here; undefined if none. */
export async function findPerson(knex: Knex, tenantId: string, id: string): Promise<PersonListItem | undefined> {
  const column = isId('psn', id) ? 'p.id' : isId('acc', id) ? 'a.id' : undefined;
  const row: PersonRow | undefined = column ? await personRows(knex, tenantId).where(column, id).first() : undefined;
  return row && personItem(row);
}

/** Whom an id names in a tenant: a person (by person id or login account id) or a service account (by account id). */
export type Holder =
  | { kind: 'person'; personId: string; accountId: string | null; displayName: string; username: string | null }
  | { kind: 'service_account'; accountId: string; name: string };

/**
 * The persons and service accounts of a tenant among lists of person and account ids, as one prepared statement (its
 * text is the same whatever the lists, so PostgreSQL plans it once per connection): persons by person id and by login
 * account id, service accounts by id; each an indexed lookup, whatever the tenant's size. Service accounts come in the
 * persons' columns, their name where a person's display name is.
 */
const holderRows = fixedStatement<[string, string[], string[]], PersonRow & { holder: Holder['kind'] }>(
  (knex, tenantId, persons, accounts) => {
    const asPerson = (q: Knex.QueryBuilder) => q.select(knex.raw("'person' as holder"));
    return asPerson(personRows(knex, tenantId).whereRaw('p.id = any(?::text[])', [persons])).unionAll(
      [
        asPerson(personRows(knex, tenantId).whereRaw('a.id = any(?::text[])', [accounts])),
        knex('accounts as a')
          .where({ 'a.tenant_id': tenantId, 'a.kind': 'service' })
          .whereRaw('a.id = any(?::text[])', [accounts])
          .select(
            knex.raw('null as id'),
            'a.name as display_name',
            knex.raw('null::timestamptz as created_at'),
            'a.id as account_id',
            knex.raw('null as username'),
            'a.status',
            knex.raw('null::timestamptz as ended_at'),
            knex.raw("'service_account' as holder"),
          ),
      ],
      true,
    );
  },
);

/** The tenant's persons and service accounts among `ids` (person ids, account ids), for naming them: one read. */
export async function holdersAmong(knex: Knex, tenantId: string, ids: readonly string[]): Promise<Holder[]> {
  const [persons, accounts] = [ids.filter((id) => isId('psn', id)), ids.filter((id) => isId('acc', id))];
  if (persons.length === 0 && accounts.length === 0) return [];
  const { rows } = await holderRows(knex, tenantId, persons, accounts);
  return rows.map((r) =>
    r.holder === 'person'
      ? { kind: 'person', personId: r.id, accountId: r.account_id, displayName: r.display_name, username: r.username }
      : { kind: 'service_account', accountId: r.account_id!, name: r.display_name },
  );
}

export interface CreatedPerson {
  personId: string;
  accountId: string;
  displayName: string;
  createdAt: string;
}

/** Creates the person, their login account in this tenant and the tenant's relationship to them, in one transaction. */
export async function createPerson(knex: Knex, tenantId: string, body: unknown): Promise<Outcome<CreatedPerson>> {
  const parsed = await parseForTenant(knex, tenantId, CreatePerson, body);
  if (!parsed.ok) return parsed;
  const { displayName, username, password } = parsed.value;
  const passwordHash = await hashSecret(password);
  // Taken in any case: the folded name is unique per tenant (migration 010).
  return unlessTaken('username is taken in this tenant (in any case)', async () => {
    const created = await knex.transaction(async (trx) => {
      const [person] = await trx('persons')
        .insert({ id: newId('psn'), display_name: displayName })
        .returning('*');
      const accountId = newId('acc');
      await trx('accounts').insert({
        id: accountId,
        tenant_id: tenantId,
        kind: 'person',
        person_id: person.id,
        username,
        username_folded: foldUsername(username),
        password_hash: passwordHash,
      });
      await trx('tenant_person_relationships').insert({ tenant_id: tenantId, person_id: person.id });
      return {
        personId: person.id,
        accountId,
        displayName: person.display_name,
        createdAt: new Date(person.created_at).toISOString(),
      };
    });
    await recordChange({
      action: 'person.create',
      target: { type: 'person', id: created.personId },
      tenantId,
      changes: {
        displayName: { from: null, to: created.displayName },
        username: { from: null, to: username },
        password: { from: null, to: REDACTED },
      },
    });
    return done(created);
  });
}

/** Ends the tenant's relationship to the person; the person and their data are kept. */
export async function endRelationship(knex: Knex, tenantId: string, personId: string): Promise<Outcome<void>> {
  const ended = isId('psn', personId)
    ? await knex('tenant_person_relationships')
        .where({ tenant_id: tenantId, person_id: personId })
        .whereNull('ended_at')
        .update({ ended_at: knex.fn.now() })
    : 0;
  if (!ended) return refused('not_found');
  await recordChange({
    action: 'person.relationship_end',
    target: { type: 'person', id: personId },
    tenantId,
    changes: { relationship: { from: 'active', to: 'ended' } },
  });
  return done(undefined);
}

export function personsRouter(knex: Knex): Router {
  const r = adminRoutes();
  r.get('/tenants/:tenantId/persons', async (req, res) =>
    reply(res, await personPage(knex, req.params.tenantId, req.query)),
  );
  r.post('/tenants/:tenantId/persons', async (req, res) =>
    reply(res, await createPerson(knex, req.params.tenantId, req.body), 201),
  );
  /** Ends the tenant's relationship to the person; the person and their data are kept. */
  r.delete('/tenants/:tenantId/persons/:personId', async (req, res) =>
    reply(res, await endRelationship(knex, req.params.tenantId, req.params.personId), 204),
  );
  return r;
}
