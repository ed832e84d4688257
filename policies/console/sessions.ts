// Server-side sessions of the admin console, in the database (table console_sessions), so every replica of the admin
// service and a restarted one know them. The browser holds only a random session id (HttpOnly, SameSite=Strict
// cookie); the database holds its SHA-256, the caller it signed in as and the session's CSRF token. A session ends
// after 30 minutes without use, 8 hours after sign-in, at sign-out, or when its tenant admin key is revoked. Only a
// sign-in creates one: the sign-in form needs no session (sign-in-csrf.ts), so anonymous visits store nothing.
import { createHash, randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { AdminCaller } from '../admin/authority.js';

export interface ConsoleSession {
  id: string;
  /** Sent back in a hidden field of every form; each POST must carry it. */
  csrf: string;
  /**
   * Whom the session signed in as (rows stored before sign-in stopped creating sessions may lack it: not signed
   * in).
   */
  caller?: AdminCaller;
  /** One message for the page this request shows (taken from the session as the request read it). */
  notice?: string;
}

export const IDLE_MS = 30 * 60 * 1000;
export const MAX_AGE_MS = 8 * 60 * 60 * 1000;
/**
 * Bounds storage (only signed-in sessions are stored, so only admins can approach it): beyond it the oldest are
 * dropped.
 */
const MAX_SESSIONS = 10_000;

const token = () => randomBytes(32).toString('base64url');
const hashOf = (id: string) => createHash('sha256').update(id).digest('base64url');

interface Row {
  csrf: string;
  caller: AdminCaller | null;
  notice: string | null;
}

export class SessionStore {
  constructor(
    private readonly knex: Knex,
    private readonly now: () => number = Date.now,
  ) {}

  async create(caller: AdminCaller): Promise<ConsoleSession> {
    const now = this.now();
    const sessions = () => this.knex('console_sessions');
    await sessions().where('idle_until', '<=', now).orWhere('ends_at', '<=', now).delete();
    await sessions()
      .whereIn(
        'id_hash',
        sessions()
          .select('id_hash')
          .orderBy('created_at', 'desc')
          .offset(MAX_SESSIONS - 1),
      )
      .delete();
    const session: ConsoleSession = { id: token(), csrf: token(), caller };
    await sessions().insert({
      id_hash: hashOf(session.id),
      csrf: session.csrf,
      caller: JSON.stringify(caller),
      created_at: now,
      idle_until: now + IDLE_MS,
      ends_at: now + MAX_AGE_MS,
    });
    return session;
  }

  /**
   * The live session with this id, its idle time restarted; undefined for an unknown or expired one. `takeNotice`
   * (a page view) takes the session's notice out of it, so it is shown once.
   */
  async get(id: string | undefined, takeNotice: boolean): Promise<ConsoleSession | undefined> {
    if (id === undefined) return undefined;
    const now = this.now();
    const { rows } = await this.knex.raw<{ rows: Row[] }>(
      `with live as (select id_hash, notice from console_sessions
                     where id_hash = ? and idle_until > ? and ends_at > ? for update)
       update console_sessions s set idle_until = ?, notice = case when ? then null else s.notice end
       from live where s.id_hash = live.id_hash
       returning s.csrf, s.caller, live.notice`,
      [hashOf(id), now, now, now + IDLE_MS, takeNotice],
    );
    const row = rows[0];
    if (!row) return undefined;
    return {
      id,
      csrf: row.csrf,
      ...(row.caller && { caller: row.caller }),
      ...(takeNotice && row.notice !== null && { notice: row.notice }),
    };
  }

  /** Leaves `notice` for the next page the session shows. */
  async leaveNotice(id: string, notice: string): Promise<void> {
    await this.knex('console_sessions').where('id_hash', hashOf(id)).update({ notice });
  }

  async destroy(id: string): Promise<void> {
    await this.knex('console_sessions').where('id_hash', hashOf(id)).delete();
  }
}
