// Storage of extension records. Each operation is one short transaction on the primary key (tenant, person,
// extension) and the per-(tenant, extension) counter row; none counts or scans a tenant's records.
// Concurrency: updates and deletes compare-and-set on the ETag in the statement itself, so of writers holding the same
// revision exactly one wins; creates take the quota from the counter row in the same transaction as the insert.
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { ExtensionWrite } from './extension-write.js';

export interface RecordKey {
  tenantId: string;
  personId: string;
  extensionId: string;
}

export interface ExtensionRecord {
  extensionId: string;
  personId: string;
  schemaVersion: number;
  etag: string;
  data: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
  updatedBy: string;
}
export type ExtensionSummary = Pick<
  ExtensionRecord,
  'extensionId' | 'schemaVersion' | 'etag' | 'updatedAt' | 'updatedBy'
>;

export type CreateResult = { created: ExtensionRecord } | { exists: string } | { quotaExceeded: true };
export type UpdateResult =
  { updated: ExtensionRecord } | { conflict: string } | { absent: true } | { quotaExceeded: true };
export type DeleteResult = { deleted: true } | { absent: true } | { conflict: string };

interface Row {
  extension_id: string;
  person_id: string;
  schema_version: number;
  etag: string;
  data: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
  updated_by: string;
}

/** A fresh strong ETag per revision: random, so it reveals nothing and never repeats an earlier revision's. */
/**
 * The tenant's record limit per extension, as SQL with one binding (the tenant id): its plan's limit, or none (NULL,
 * so `records < limit` is never true) when the plan is below the write capability's minimum. After a downgrade the
 * app's records stay readable and deletable and every write is 422 quota_exceeded (contract §3, last row), checked in
 * the write's own statement like the quota.
 */
const RECORD_LIMIT = `(select p.max_records_per_extension from tenants t join plans p on p.id = t.plan
    where t.id = ? and p.level >= (select mp.level from capabilities c join plans mp on mp.id = c.min_plan where c.id = 'svc.person.metadata.write'))`;

const newEtag = () => `"${randomBytes(12).toString('base64url')}"`;

const recordOf = (r: Row): ExtensionRecord => ({
  extensionId: r.extension_id,
  personId: r.person_id,
  schemaVersion: r.schema_version,
  etag: r.etag,
  data: r.data,
  createdAt: new Date(r.created_at).toISOString(),
  updatedAt: new Date(r.updated_at).toISOString(),
  updatedBy: r.updated_by,
});

/** Thrown inside a create transaction to roll the insert back when the quota is full. */
class QuotaFull extends Error {}

export function extensionRecords(knex: Knex) {
  const byKey = (k: RecordKey) => ({ tenant_id: k.tenantId, person_id: k.personId, extension_id: k.extensionId });
  const currentEtag = async (db: Knex | Knex.Transaction, k: RecordKey): Promise<string | undefined> =>
    (await db('person_extensions').where(byKey(k)).first('etag'))?.etag;

  return {
    /**
     * The record, if it exists and its extension is owned by `clientId` (one query: absent and not-owned look alike).
     */
    async get(k: RecordKey, clientId: string): Promise<ExtensionRecord | undefined> {
      const row = await knex('person_extensions as pe')
        .join('extensions as e', 'e.id', 'pe.extension_id')
        .where({
          'pe.tenant_id': k.tenantId,
          'pe.person_id': k.personId,
          'pe.extension_id': k.extensionId,
          'e.client_id': clientId,
        })
        .first('pe.*');
      return row && recordOf(row);
    },

    /** Up to `limit` summaries of `clientId`'s records after extension id `after`, in extension id order (keyset). */
    async list(
      k: Omit<RecordKey, 'extensionId'>,
      clientId: string,
      after: string,
      limit: number,
    ): Promise<ExtensionSummary[]> {
      const rows: Row[] = await knex('person_extensions as pe')
        .join('extensions as e', 'e.id', 'pe.extension_id')
        .where({ 'pe.tenant_id': k.tenantId, 'pe.person_id': k.personId, 'e.client_id': clientId })
        .andWhere('pe.extension_id', '>', after)
        .orderBy('pe.extension_id')
        .limit(limit)
        .select('pe.extension_id', 'pe.schema_version', 'pe.etag', 'pe.updated_at', 'pe.updated_by');
      return rows.map((r) => ({
        extensionId: r.extension_id,
        schemaVersion: r.schema_version,
        etag: r.etag,
        updatedAt: new Date(r.updated_at).toISOString(),
        updatedBy: r.updated_by,
      }));
    },

    /**
     * Inserts the record and takes one unit of the (tenant, extension) record quota, in one transaction. The counter
     * row's lock orders concurrent creates, and its `records < limit` test is re-checked after the lock is granted,
     * so creates racing at the limit cannot exceed it.
     */
    async create(k: RecordKey, w: ExtensionWrite, clientId: string): Promise<CreateResult> {
      try {
        return await knex.transaction(async (trx) => {
          const [row] = await trx('person_extensions')
            .insert({
              ...byKey(k),
              schema_version: w.schemaVersion,
              data: w.json,
              etag: newEtag(),
              updated_by: clientId,
              created_at: trx.fn.now(),
              updated_at: trx.fn.now(),
            })
            .onConflict(['tenant_id', 'person_id', 'extension_id'])
            .ignore()
            .returning('*');
          if (!row) return { exists: (await currentEtag(trx, k))! };
          await trx('extension_record_counts')
            .insert({ tenant_id: k.tenantId, extension_id: k.extensionId, records: 0 })
            .onConflict(['tenant_id', 'extension_id'])
            .ignore();
          const taken = await trx('extension_record_counts')
            .where({ tenant_id: k.tenantId, extension_id: k.extensionId })
            .andWhereRaw(`records < ${RECORD_LIMIT}`, [k.tenantId])
            .increment('records', 1)
            .returning('records');
          if (!taken.length) throw new QuotaFull();
          return { created: recordOf(row) };
        });
      } catch (err) {
        if (err instanceof QuotaFull) return { quotaExceeded: true };
        throw err;
      }
    },

    /**
     * Replaces the record only if its ETag is still `ifMatch` and the (tenant, extension) record quota is not full
     * (contract §3: a full quota, also after a plan downgrade, rejects writes; reads and deletes go on), in one
     * statement. When nothing was replaced, the record's current state says why: absent, another revision, or the
     * quota.
     */
    async update(k: RecordKey, ifMatch: string, w: ExtensionWrite, clientId: string): Promise<UpdateResult> {
      const [row] = await knex('person_extensions')
        .where({ ...byKey(k), etag: ifMatch })
        .whereRaw(
          'coalesce((select records from extension_record_counts ' +
            `where tenant_id = ? and extension_id = ?), 0) < ${RECORD_LIMIT}`,
          [k.tenantId, k.extensionId, k.tenantId],
        )
        .update({
          schema_version: w.schemaVersion,
          data: w.json,
          etag: newEtag(),
          updated_by: clientId,
          updated_at: knex.fn.now(),
        })
        .returning('*');
      if (row) return { updated: recordOf(row) };
      const etag = await currentEtag(knex, k);
      if (!etag) return { absent: true };
      return etag === ifMatch ? { quotaExceeded: true } : { conflict: etag };
    },

    /** Deletes the record (only at `ifMatch`, unless `*`) and releases its quota unit in the same transaction. */
    async remove(k: RecordKey, ifMatch: string): Promise<DeleteResult> {
      return knex.transaction(async (trx) => {
        const deleted = await trx('person_extensions')
          .where(byKey(k))
          .modify((q) => void (ifMatch !== '*' && q.andWhere({ etag: ifMatch })))
          .delete();
        if (deleted) {
          await trx('extension_record_counts')
            .where({ tenant_id: k.tenantId, extension_id: k.extensionId })
            .decrement('records', 1);
          return { deleted: true };
        }
        const etag = ifMatch === '*' ? undefined : await currentEtag(trx, k);
        return etag ? { conflict: etag } : { absent: true };
      });
    },
  };
}
export type ExtensionRecords = ReturnType<typeof extensionRecords>;
