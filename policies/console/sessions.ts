// Server-side sessions of the admin console. The browser holds only a random session id (HttpOnly, SameSite=Strict
// cookie); the caller it signed in as and the session's CSRF token stay here. A session ends after 30 minutes without
// use, 8 hours after sign-in, at sign-out, or when its tenant admin key is revoked.
import { randomBytes } from 'node:crypto';
import type { AdminCaller } from '../admin/authority.js';

export interface ConsoleSession {
  id: string;
  /** Sent back in a hidden field of every form; each POST must carry it. */
  csrf: string;
  /** Undefined until sign-in: an anonymous session only carries the sign-in form's CSRF token. */
  caller?: AdminCaller;
  /** One message for the next page (after a redirect). */
  notice?: string;
  idleUntil: number;
  endsAt: number;
}

export const IDLE_MS = 30 * 60 * 1000;
export const MAX_AGE_MS = 8 * 60 * 60 * 1000;
/** Bounds memory against a flood of sign-in page views: beyond it the oldest sessions are dropped. */
const MAX_SESSIONS = 10_000;

const token = () => randomBytes(32).toString('base64url');

export class SessionStore {
  private readonly sessions = new Map<string, ConsoleSession>();
  constructor(private readonly now: () => number = Date.now) {}

  create(caller?: AdminCaller): ConsoleSession {
    const now = this.now();
    for (const [id, s] of this.sessions) if (this.expired(s, now)) this.sessions.delete(id);
    while (this.sessions.size >= MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
    const session: ConsoleSession = { id: token(), csrf: token(), ...(caller && { caller }), idleUntil: now + IDLE_MS, endsAt: now + MAX_AGE_MS };
    this.sessions.set(session.id, session);
    return session;
  }

  /** The live session with this id, its idle time restarted; undefined for an unknown or expired one. */
  get(id: string | undefined): ConsoleSession | undefined {
    const session = id === undefined ? undefined : this.sessions.get(id);
    if (!session) return undefined;
    const now = this.now();
    if (this.expired(session, now)) return void this.sessions.delete(session.id);
    session.idleUntil = now + IDLE_MS;
    return session;
  }

  destroy(id: string): void {
    this.sessions.delete(id);
  }

  private expired(s: ConsoleSession, now: number): boolean {
    return now >= s.idleUntil || now >= s.endsAt;
  }
}
