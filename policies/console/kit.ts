// What every console page group shares: the request's locals, rendering a page or a refusal, the notice left for the
// next page, and running an admin operation under the admin API's authority check (policies/admin/authority.ts).
import type { Request, Response } from 'express';
import type { Knex } from 'knex';
import { requestIdOf } from '../../common/http.js';
import type { Logger } from '../../common/log.js';
import { ownerOf, refusalFor, type AdminCaller, type AdminOperation } from '../admin/authority.js';
import { recordNoChange } from '../admin/audit.js';
import { refusalStatus, type Outcome, type Refusal } from '../../wire/outcome.js';
import type { TenantView } from '../admin/tenants.js';
import type { Html } from './html.js';
import type { ConsoleSession, SessionStore } from './sessions.js';
import * as pages from './pages.js';
import { refusalWords } from './refusals.js';

/** The title of a page answering a refused operation (not_found has its own page). */
export const REFUSAL_TEXT: Partial<Record<Refusal['error'], string>> = {
  schema_invalid: 'That was not accepted',
  already_exists: 'That conflicts with what is stored',
  quota_exceeded: "That is over the tenant's plan limit",
  revision_conflict: 'That changed meanwhile',
};

/** An admin API path from raw segments, encoded as the API would receive them (ownerOf decodes each segment). */
export const apiPath = (...segments: string[]) => `/${segments.map(encodeURIComponent).join('/')}`;
export const one = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
export const list = (v: unknown): unknown[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
/** The text values of a repeated field (ticked boxes), to show the form again as it was sent. */
export const texts = (v: unknown): string[] => list(v).filter((x): x is string => typeof x === 'string');
/** A textarea of one entry per line, as a list (blank lines dropped). */
export const linesOf = (v: unknown): string[] =>
  (one(v) ?? '')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);

/** Answers a refusal with a page of its own (the promise of it), or returns undefined to leave it to the refusal page. */
export type RefusalAnswer = (refusal: Refusal) => Promise<void> | undefined;

interface Locals {
  session: ConsoleSession;
  caller: AdminCaller;
  tenant: TenantView;
}
/** A signed-in request's session, caller and (on a tenant's pages) tenant. */
export const locals = (res: Response) => res.locals as unknown as Locals;

/** What the pages say about the rest of the platform. */
export interface ConsoleSite {
  /** The issuer's token endpoint, for the next step shown with a new service account. */
  tokenEndpoint: string;
  /** Whether the issuer offers the client_credentials grant (ISSUER_ENABLE_CLIENT_CREDENTIALS). */
  clientCredentials: boolean;
}

export function consoleKit(db: Knex, sessions: SessionStore, log: Logger, site: ConsoleSite) {
  const send = (res: Response, page: Html, status = 200) => void res.status(status).type('html').send(page.text);
  const frameOf = (res: Response, title: string) => ({
    title,
    session: res.locals.session as ConsoleSession | undefined,
    tenant: res.locals.tenant as TenantView | undefined,
  });
  const problem = (res: Response, status: number, title: string, message: string, back?: pages.Link) =>
    send(res, pages.problemPage(frameOf(res, title), message, requestIdOf(res), back), status);
  const notFound = (res: Response) =>
    problem(res, 404, 'Not found', 'There is nothing here, or it is not yours to see.');
  /** The page of a refusal, in words, linking `back` to the object it is about. */
  const refusedPage = (res: Response, refusal: Refusal, back?: pages.Link) => {
    if (refusal.error === 'not_found') return notFound(res);
    const title = REFUSAL_TEXT[refusal.error] ?? 'That could not be done';
    return problem(res, refusalStatus(refusal), title, refusalWords(refusal, `${title}.`), back);
  };
  const goTo = async (res: Response, path: string, notice?: string) => {
    if (notice) await sessions.leaveNotice(locals(res).session.id, notice);
    res.redirect(303, path);
  };
  /** The form's fields as sent (for showing them again) and the sentence that says why they were refused. */
  const enteredFrom = (req: Request, refusal: Refusal, fields: string[]): pages.Entered => ({
    values: Object.fromEntries(fields.map((f) => [f, one(req.body[f])])),
    problem: refusalWords(refusal, `${REFUSAL_TEXT[refusal.error] ?? 'That could not be done'}.`),
  });

  /** True when the caller may run `op` on this tenant's object; otherwise answers the 404 page. */
  async function permitted(res: Response, op: AdminOperation): Promise<boolean> {
    const { caller, tenant: current } = locals(res);
    const owner = await ownerOf(db, op);
    // An operator-only operation here is always on this page's tenant (its path names it).
    const onThisTenant = owner.operatorOnly || owner.tenantId === current.tenantId;
    if (!onThisTenant || refusalFor(caller, owner)) return (notFound(res), false);
    return true;
  }

  /**
   * Runs `run` as the admin API operation `op` when `permitted`; its outcome, a refusal answered by `refused` when it
   * answers it, otherwise with its page, which links `back` to the object it is about.
   */
  async function attempt<T>(
    res: Response,
    op: AdminOperation,
    run: () => Promise<Outcome<T>>,
    back: pages.Link,
    refused?: RefusalAnswer,
  ) {
    if (!(await permitted(res, op))) return undefined;
    const outcome = await run();
    if (!outcome.ok) await (refused?.(outcome) ?? refusedPage(res, outcome, back));
    return outcome;
  }

  /** The value of `attempt`, or undefined when a page has been answered. */
  async function perform<T>(
    res: Response,
    op: AdminOperation,
    run: () => Promise<Outcome<T>>,
    back: pages.Link,
  ): Promise<T | undefined> {
    const outcome = await attempt(res, op, run, back);
    return outcome?.ok ? outcome.value : undefined;
  }

  /**
   * Destructive actions ask first: without `confirmed=yes` the answer is a page saying what will happen, with the same
   * form behind a Confirm button; nothing changes until it is pressed.
   */
  const confirmed = async (
    req: Request,
    res: Response,
    op: AdminOperation,
    fields: Record<string, string>,
    c: pages.Confirmation,
  ): Promise<boolean> => {
    if (one(req.body.confirmed) === 'yes') return true;
    if (!(await permitted(res, op))) return false; // only the caller's own objects are asked about
    recordNoChange();
    send(
      res,
      pages.confirmPage({ ...frameOf(res, 'Are you sure?'), session: locals(res).session }, req.originalUrl, fields, c),
    );
    return false;
  };

  /**
   * A destructive change from a button: asks first (`ask` false skips the question, as enabling needs none), then
   * runs `run` as the admin API operation `op` and goes back with the notice `said` gives; a refusal answers its page.
   */
  async function confirmThenPerform<T>(
    req: Request,
    res: Response,
    op: AdminOperation,
    run: () => Promise<Outcome<T>>,
    c: pages.Confirmation & {
      fields?: Record<string, string>;
      ask?: boolean;
      said: (value: T) => string;
      /** Where to go once done, when not `back` (the object may be gone). */
      after?: string;
      /** A page for a refusal this action words itself (the generic refusal page otherwise). */
      refused?: RefusalAnswer;
    },
  ): Promise<void> {
    if (c.ask !== false && !(await confirmed(req, res, op, c.fields ?? {}, c))) return;
    // The answer is held until the change commits (admin/audit.ts), so only the outcome tells whether a page was sent.
    const outcome = await attempt(res, op, run, c.back, c.refused);
    if (outcome?.ok) await goTo(res, c.after ?? c.back.href, c.said(outcome.value));
  }

  /**
   * A status form (app, login, service account): disabling asks first with `consequence`, enabling goes ahead;
   * `fields` are carried through the question (a list's search, say).
   */
  const changeStatus = <T>(
    req: Request,
    res: Response,
    path: string,
    change: (body: { status: unknown }) => Promise<Outcome<T>>,
    c: pages.Confirmation & { said: (value: T) => string; fields?: Record<string, string> },
  ) => {
    const body = { status: req.body.status };
    const op = { method: 'PATCH', path, body } as const;
    const ask = body.status === 'disabled';
    const fields = { ...c.fields, status: 'disabled' };
    return confirmThenPerform(req, res, op, () => change(body), { ...c, ask, fields });
  };

  return {
    db,
    log,
    site,
    send,
    frameOf,
    problem,
    notFound,
    refusedPage,
    goTo,
    enteredFrom,
    permitted,
    perform,
    confirmed,
    confirmThenPerform,
    changeStatus,
  };
}
export type ConsoleKit = ReturnType<typeof consoleKit>;
