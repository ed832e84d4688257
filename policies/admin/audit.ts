// The audit trail of administrative changes (platform-interfaces.md "Audit trail"). One mechanism for the admin API,
// the console and (through the API) the CLI: `auditedChanges` runs every changing request in one transaction and
// holds its answer until that transaction commits; the operations, which query through `scopedKnex`, run inside it
// and call `recordChange` for what they changed. So the entry and the change commit together or not at all: a refused
// (4xx) or failed request rolls back both, and a successful change that recorded nothing is refused as a bug (503)
// rather than committed unaudited.
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import type { Knex } from 'knex';
import { sendProblem, requestIdOf } from '../../common/http.js';
import type { Logger } from '../../common/log.js';
import type { AdminCaller } from './authority.js';
import { canonicalJson as canonical } from '../../common/canonical-json.js';

export interface AuditActor {
  kind: 'operator' | 'tenant_admin_key';
  keyId?: string;
}
export type FieldChange = { from: unknown; to: unknown };
export interface ChangeRecord {
  /** `<resource>.<verb>`, e.g. client.disable, grant.replace, tenant.plan_change. */
  action: string;
  target: { type: string; id: string };
  /** The tenant the change belongs to; null outside any tenant (the capability catalogue). */
  tenantId: string | null;
  changes?: Record<string, FieldChange> | undefined;
}

interface ChangeScope {
  trx: Knex.Transaction;
  actor: AuditActor;
  requestId: string;
  ip: string;
  /** Actions recorded so far (counted once the transaction commits). */
  recorded: string[];
  unchanged: boolean;
}
const scope = new AsyncLocalStorage<ChangeScope>();

/** What secrets and keys show in `changes`: that they changed, never a value. */
export const REDACTED = '[redacted]';
/** A serialised append: every writer of the chain takes this transaction-scoped advisory lock first. */
const CHAIN_LOCK = 7_200_123_906;

const actorOf = (caller: AdminCaller): AuditActor =>
  caller.kind === 'operator' ? { kind: 'operator' } : { kind: 'tenant_admin_key', keyId: caller.keyId };

/**
 * A knex that runs on the current change's transaction when there is one, and on `knex` otherwise. The admin
 * operations are built on it, so whatever they read and write belongs to the audited transaction.
 */
export function scopedKnex(knex: Knex): Knex {
  const current = () => scope.getStore()?.trx ?? knex;
  return new Proxy(knex, {
    apply: (_target, thisArg, args) =>
      Reflect.apply(current() as unknown as (...a: unknown[]) => unknown, thisArg, args),
    get: (_target, prop) => {
      const target = current();
      const value = Reflect.get(target, prop);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * Runs independent reads for one answer: together outside an audited change (each on a pooled connection of its own),
 * one after another inside one, whose transaction is a single connection that runs one statement at a time (pg 8
 * queues statements sent to a busy connection, with a deprecation warning; pg 9 refuses them).
 */
export async function reads<T extends unknown[]>(...readers: { [K in keyof T]: () => Promise<T[K]> }): Promise<T> {
  if (!scope.getStore()) return (await Promise.all(readers.map((read) => read()))) as T;
  const results: unknown[] = [];
  for (const read of readers) results.push(await read());
  return results as T;
}

/** The field-by-field differences of `before` and `after` over `fields` (secrets are never among them). */
export function fieldChanges(before: object | undefined, after: object, fields: string[]): Record<string, FieldChange> {
  const out: Record<string, FieldChange> = {};
  for (const f of fields) {
    const from = (before as Record<string, unknown> | undefined)?.[f] ?? null;
    const to = (after as Record<string, unknown>)[f] ?? null;
    if (canonical(from) !== canonical(to)) out[f] = { from, to };
  }
  return out;
}

export interface AuditRow {
  id: string | number;
  at: Date | string;
  tenant_id: string | null;
  actor_kind: string;
  actor_key_id: string | null;
  action: string;
  target_type: string;
  target_id: string;
  changes: Record<string, FieldChange> | null;
  request_id: string;
  ip: string;
  hash: string;
}

/** The chain link of `row`: SHA-256 of the previous entry's hash and this entry's content. */
export function chainHash(previous: string, row: Omit<AuditRow, 'hash'>): string {
  const content = canonical({
    id: String(row.id),
    at: new Date(row.at).toISOString(),
    tenantId: row.tenant_id,
    actorKind: row.actor_kind,
    actorKeyId: row.actor_key_id,
    action: row.action,
    targetType: row.target_type,
    targetId: row.target_id,
    changes: row.changes,
    requestId: row.request_id,
    ip: row.ip,
  });
  return createHash('sha256').update(`${previous}\n${content}`).digest('hex');
}
export const GENESIS = '';

/**
 * Appends the entry for a change made in the current audited transaction. Outside one (the demo seed, migrations)
 * nothing is recorded: only changes through the admin API, the console and the CLI are audited.
 */
export async function recordChange(change: ChangeRecord): Promise<void> {
  const s = scope.getStore();
  if (!s) return;
  const { trx } = s;
  await trx.raw('select pg_advisory_xact_lock(?)', [CHAIN_LOCK]);
  const [last] = await trx('admin_audit').orderBy('id', 'desc').limit(1).select('hash');
  const { rows } = await trx.raw(`select nextval(pg_get_serial_sequence('admin_audit', 'id')) as id`);
  const changes = change.changes && Object.keys(change.changes).length ? change.changes : null;
  const row = {
    id: String(rows[0].id),
    at: new Date().toISOString(),
    tenant_id: change.tenantId,
    actor_kind: s.actor.kind,
    actor_key_id: s.actor.keyId ?? null,
    action: change.action,
    target_type: change.target.type,
    target_id: change.target.id,
    changes,
    request_id: s.requestId,
    ip: s.ip,
  };
  await trx('admin_audit').insert({
    ...row,
    changes: changes && JSON.stringify(changes),
    hash: chainHash(last?.hash ?? GENESIS, row),
  });
  s.recorded.push(change.action);
}

/** A changing request that turned out to change nothing (an empty PATCH): no entry, and none is owed. */
export function recordNoChange(): void {
  const s = scope.getStore();
  if (s) s.unchanged = true;
}

const CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const ROLLED_BACK = Symbol('refused: rolled back');

/**
 * Runs each changing request (POST, PUT, PATCH, DELETE) in one transaction with its audit entries. The answer is held
 * until the transaction ends: a 4xx/5xx answer rolls back, a success commits and is then sent; if the commit fails, or
 * the handler changed something without recording it, the answer becomes 503 and nothing is kept. `onCommitted` is
 * told each committed entry's action (the admin_changes_total counter).
 */
export function auditedChanges(
  knex: Knex,
  log: Logger,
  callerOf: (res: Response) => AdminCaller,
  onCommitted: (action: string) => void = () => undefined,
): RequestHandler {
  return (req: Request, res: Response, next) => {
    if (!CHANGING.has(req.method)) return next();
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    let held: unknown[] = [];
    let answered!: () => void;
    const answer = new Promise<void>((resolve) => (answered = resolve));
    res.end = ((...args: unknown[]) => ((held = args), answered(), res)) as Response['end'];
    const release = () => void (res.end = end as Response['end']);

    knex
      .transaction(async (trx) => {
        const s: ChangeScope = {
          trx,
          actor: actorOf(callerOf(res)),
          requestId: requestIdOf(res),
          ip: req.ip ?? req.socket.remoteAddress ?? 'unknown',
          recorded: [],
          unchanged: false,
        };
        await scope.run(s, async () => {
          next();
          await answer;
        });
        if (res.statusCode >= 400) throw ROLLED_BACK;
        if (s.recorded.length === 0 && !s.unchanged)
          throw new Error(`admin change without an audit entry: ${req.method} ${req.baseUrl}${req.path}`);
        return s.recorded;
      })
      .then(
        (actions) => {
          release();
          for (const action of actions) onCommitted(action);
          end(...held);
        },
        (err) => {
          release();
          if (err === ROLLED_BACK) return end(...held);
          log.error({ err, requestId: requestIdOf(res) }, 'admin change not committed');
          for (const name of res.getHeaderNames()) if (name !== 'x-request-id') res.removeHeader(name);
          if (res.headersSent) return end();
          sendProblem(res, 'authorization_unavailable', {
            status: 503,
            message: 'the change was not made; retry later',
          });
        },
      );
  };
}

export interface AuditEntryView {
  id: string;
  at: string;
  tenantId: string | null;
  actor: AuditActor;
  action: string;
  target: { type: string; id: string };
  changes?: Record<string, FieldChange>;
  requestId: string;
  ip: string;
  hash: string;
}

export const entryView = (r: AuditRow): AuditEntryView => ({
  id: String(r.id),
  at: new Date(r.at).toISOString(),
  tenantId: r.tenant_id,
  actor: r.actor_kind === 'operator' ? { kind: 'operator' } : { kind: 'tenant_admin_key', keyId: r.actor_key_id ?? '' },
  action: r.action,
  target: { type: r.target_type, id: r.target_id },
  ...(r.changes ? { changes: r.changes } : {}),
  requestId: r.request_id,
  ip: r.ip,
  hash: r.hash,
});
