// The admin console (docs/admin-console.md): server-rendered pages on the admin service for tenant admins and the
// operator. Each action names the admin API operation it is and passes the same authority check
// (policies/admin/authority.ts) and the same operation code (policies/admin/*) as the JSON API; this file only turns
// forms into those calls and outcomes into pages.
import express, { Router, type NextFunction, type Request, type Response } from 'express';
import cookieParser from 'cookie-parser';
import type { Knex } from 'knex';
import { isClientDataError, requestIdOf } from '../../common/http.js';
import { overHttps, pageSecurityHeaders } from '../../common/page-security.js';
import { HashingBusy, sameSecret } from '../../common/secrets.js';
import { jsonInputProblem } from '../../common/json-input.js';
import type { Logger } from '../../common/log.js';
import { DENY_CODES, STATUS_OF } from '../../wire/codes.js';
import { CAPABILITIES } from '../../wire/decision.js';
import { adminIdentifier, ownerOf, refusalFor, type AdminCaller, type AdminOperation } from '../admin/authority.js';
import { tenantAdminKeyLive } from '../admin/admin-key-store.js';
import { createClient, findClient, listClients, updateClient, type ClientView } from '../admin/clients.js';
import { capabilityCatalogue } from '../admin/capabilities.js';
import { grantsOfTenant, putGrant } from '../admin/grants.js';
import { createNextSecret, hasPendingSecret, promoteNextSecret } from '../admin/client-secrets.js';
import { advanceEpoch, consentsOf, listServiceAccounts, revokeSessions, setAccountStatus } from '../admin/accounts.js';
import { listExtensions, registerExtension } from '../admin/extensions.js';
import { recentDecisions, usage, usagePerDay, type DecisionFilters } from '../admin/observability.js';
import { createTenant, findTenant, listTenants, updateTenant, type TenantView } from '../admin/tenants.js';
import { adminKeyPage, createAdminKey, revokeAdminKey } from '../admin/admin-keys.js';
import { DEFAULT_RATE_LIMIT } from '../evaluate.js';
import { createPerson, personPage } from '../admin/persons.js';
import { streamExport } from '../admin/export.js';
import { auditedChanges, recordNoChange, scopedKnex } from '../admin/audit.js';
import { auditPage } from '../admin/audit-trail.js';
import { MAX_BODY_DEPTH, type Outcome, type Refusal } from '../admin/support.js';
import { SCRIPT, STYLE, type Html } from './html.js';
import { SessionStore, type ConsoleSession } from './sessions.js';
import { SIGN_IN_COOKIE, signInCsrf } from './sign-in-csrf.js';
import { waitMessage, type CredentialThrottle } from '../../common/credential-throttle.js';
import * as pages from './pages.js';

const { CONSOLE_PATH, tenantPath, appPath } = pages;
const COOKIE = 'console_session';
const DECISIONS_SHOWN = 100;

const SECURITY_HEADERS = pageSecurityHeaders(STYLE, SCRIPT)();

/** A sentence for a person about a refused operation (not_found has its own page). */
const REFUSAL_TEXT: Partial<Record<Refusal['error'], string>> = {
  schema_invalid: 'That was not accepted',
  already_exists: 'That already exists',
  quota_exceeded: "That is over the tenant's plan limit",
};

/** An admin API path from raw segments, encoded as the API would receive them (ownerOf decodes each segment). */
const apiPath = (...segments: string[]) => `/${segments.map(encodeURIComponent).join('/')}`;
const one = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const list = (v: unknown): unknown[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
/** A textarea of one entry per line, as a list (blank lines dropped). */
const linesOf = (v: unknown): string[] => (one(v) ?? '').split(/\r?\n/).map((l) => l.trim()).filter(Boolean);

interface Locals { session: ConsoleSession; caller: AdminCaller; tenant: TenantView }
const locals = (res: Response) => res.locals as unknown as Locals;

export interface ConsoleDeps {
  knex: Knex;
  adminToken: string;
  log: Logger;
  /** Told of each committed admin change's action (admin_changes_total). */
  countChange?: (action: string) => void;
  /** Wrong keys per address, shared with the admin API's bearers. */
  throttle: CredentialThrottle;
}

export function consoleRouter({ knex, adminToken, log, countChange, throttle }: ConsoleDeps): Router {
  const r = Router();
  // The session store joins an audited change's transaction too (it leaves the change's notice), so a page never
  // waits for a second connection that the embedded database, with one, cannot give while the change runs.
  const sessions = new SessionStore(scopedKnex(knex));
  const identifyAdmin = adminIdentifier(knex, adminToken);

  const send = (res: Response, page: Html, status = 200) => res.status(status).type('html').send(page.text);
  const frameOf = (res: Response, title: string) => ({ title, session: res.locals.session as ConsoleSession | undefined, tenant: res.locals.tenant as TenantView | undefined });
  const problem = (res: Response, status: number, title: string, message: string) =>
    send(res, pages.problemPage(frameOf(res, title), message, requestIdOf(res)), status);
  const notFound = (res: Response) => problem(res, 404, 'Not found', 'There is nothing here, or it is not yours to see.');
  const refusedPage = (res: Response, refusal: Refusal) => {
    if (refusal.error === 'not_found') return notFound(res);
    const text = REFUSAL_TEXT[refusal.error] ?? 'That could not be done';
    return problem(res, STATUS_OF[refusal.error], text, refusal.message ? `${text}: ${refusal.message}.` : `${text}.`);
  };
  const setCookie = (req: Request, res: Response, session: ConsoleSession) =>
    res.cookie(COOKIE, session.id, { httpOnly: true, sameSite: 'strict', secure: overHttps(req), path: CONSOLE_PATH });
  const signInForm = signInCsrf(adminToken);
  /** The sign-in form's token: the one its cookie already vouches for, or a new one with its cookie. */
  const signInToken = (req: Request, res: Response) => {
    const kept = signInForm.tokenOf(one(req.cookies?.[SIGN_IN_COOKIE]));
    if (kept) return kept;
    const { token, cookie } = signInForm.issue();
    res.cookie(SIGN_IN_COOKIE, cookie, { httpOnly: true, sameSite: 'strict', secure: overHttps(req), path: CONSOLE_PATH });
    return token;
  };
  const goTo = async (res: Response, path: string, notice?: string) => {
    if (notice) await sessions.leaveNotice(locals(res).session.id, notice);
    res.redirect(303, path);
  };

  /** The form's fields as sent (for showing them again) and the sentence that says why they were refused. */
  const enteredFrom = (req: Request, refusal: Refusal, fields: string[]): pages.Entered => ({
    values: Object.fromEntries(fields.map((f) => [f, one(req.body[f])])),
    problem: `${REFUSAL_TEXT[refusal.error] ?? 'That could not be done'}: ${refusal.message ?? refusal.error}.`,
  });

  r.use((_req, res, next) => (res.set(SECURITY_HEADERS), next()));
  r.use(cookieParser(), express.urlencoded({ extended: false, limit: '64kb', parameterLimit: 100 }));

  // The session, if any; a tenant admin key revoked since sign-in ends it.
  r.use(async (req, res, next) => {
    // A page view shows the notice an earlier action left, once.
    const session = await sessions.get(one(req.cookies?.[COOKIE]), req.method === 'GET');
    const caller = session?.caller;
    if (caller?.kind === 'tenant' && !(await tenantAdminKeyLive(knex, caller.tenantId, caller.keyId))) await sessions.destroy(session!.id);
    else if (session) res.locals.session = session;
    next();
  });

  // Every POST carries the session's CSRF token in a hidden field, or (the sign-in form, before any session) the token
  // of its signed cookie; anything else is refused before it does anything.
  r.use((req, res, next) => {
    if (req.method !== 'POST') return next();
    const session = res.locals.session as ConsoleSession | undefined;
    const presented = one(req.body?._csrf);
    const expected = session ? session.csrf : req.path === '/sign-in' ? signInForm.tokenOf(one(req.cookies?.[SIGN_IN_COOKIE])) : undefined;
    if (expected && presented && sameSecret(presented, expected)) return next();
    problem(res, 403, 'Form refused', 'This form was not sent from a current console page, so nothing was changed. Reload the page and try again.');
  });

  r.get('/', (_req, res) => {
    const caller = (res.locals.session as ConsoleSession | undefined)?.caller;
    if (!caller) return res.redirect(303, `${CONSOLE_PATH}/sign-in`);
    res.redirect(303, caller.kind === 'operator' ? `${CONSOLE_PATH}/tenants` : tenantPath(caller.tenantId, 'apps'));
  });

  r.get('/sign-in', (req, res) => {
    if ((res.locals.session as ConsoleSession | undefined)?.caller) return res.redirect(303, `${CONSOLE_PATH}/`);
    send(res, pages.signInPage({ csrf: signInToken(req, res) }));
  });

  r.post('/sign-in', async (req, res) => {
    const old = res.locals.session as ConsoleSession | undefined;
    const key = one(req.body.key)?.trim();
    const address = req.ip ?? 'unknown';
    const waitS = await throttle.waitSeconds(undefined, address);
    if (waitS !== undefined) {
      res.set('retry-after', String(waitS));
      return send(res, pages.signInPage({ csrf: one(req.body._csrf)! }, waitMessage(waitS)), 429);
    }
    let caller: AdminCaller | undefined;
    try {
      caller = key ? await identifyAdmin(key) : undefined;
    } catch (err) {
      if (!(err instanceof HashingBusy)) throw err;
      res.set('retry-after', String(err.retryAfterS));
      return problem(res, 503, 'Busy', 'Signing in is busy just now. Try again in a few seconds.');
    }
    if (!caller) {
      await throttle.failed(undefined, address);
      return send(res, pages.signInPage({ csrf: one(req.body._csrf)! }, 'That key did not work. Check it and try again.'), 401);
    }
    // A new session id at sign-in, so an id known before it (fixation) is worth nothing after.
    if (old) await sessions.destroy(old.id);
    res.clearCookie(SIGN_IN_COOKIE, { path: CONSOLE_PATH });
    const session = await sessions.create(caller);
    setCookie(req, res, session);
    res.locals.session = session;
    await goTo(res, `${CONSOLE_PATH}/`);
  });

  r.post('/sign-out', async (req, res) => {
    await sessions.destroy(locals(res).session.id);
    res.clearCookie(COOKIE, { path: CONSOLE_PATH });
    send(res, pages.signedOutPage());
  });

  // Everything below needs a signed-in session.
  r.use((req, res, next) => {
    const caller = (res.locals.session as ConsoleSession | undefined)?.caller;
    if (!caller) return req.method === 'GET' ? res.redirect(303, `${CONSOLE_PATH}/sign-in`) : notFound(res);
    res.locals.caller = caller;
    next();
  });

  // Every change made in the console runs in one transaction with its audit entry, as in the admin API; the operations
  // query through `db`, which joins that transaction.
  const db = scopedKnex(knex);
  const audited = auditedChanges(knex, log, (res) => locals(res).caller, countChange);

  r.get('/tenants', async (_req, res) => {
    const { session, caller } = locals(res);
    if (caller.kind !== 'operator') return notFound(res);
    send(res, pages.tenantsPage(session, await listTenants(knex)));
  });

  r.post('/tenants', audited, async (req, res) => {
    const { session, caller } = locals(res);
    if (caller.kind !== 'operator') return notFound(res);
    const created = await createTenant(db, { displayName: one(req.body.displayName), label: one(req.body.label), plan: one(req.body.plan) });
    if (!created.ok) return send(res, pages.tenantsPage(session, await listTenants(db), enteredFrom(req, created, ['displayName', 'label', 'plan'])), STATUS_OF[created.error]);
    await goTo(res, tenantPath(created.value.tenantId, 'settings'), `${created.value.displayName} is created (${created.value.label}, plan ${created.value.plan}).`);
  });

  const tenant = Router({ mergeParams: true });
  tenant.use(audited);
  r.use('/tenants/:tenantId', async (req: Request<{ tenantId: string }>, res: Response, next: NextFunction) => {
    const { caller } = locals(res);
    const { tenantId } = req.params;
    // A tenant admin key sees only its own tenant; any other answers as if it did not exist.
    const found = caller.kind === 'tenant' && caller.tenantId !== tenantId ? undefined : await findTenant(db, tenantId);
    if (!found) return notFound(res);
    res.locals.tenant = found;
    next();
  }, tenant);

  /**
   * Runs `run` as the admin API operation `op`: the caller must pass the admin API's authority check for it, and the
   * object it names must belong to this page's tenant; otherwise the answer is the 404 page and nothing runs.
   */
  /** True when the caller may run `op` on this tenant's object; otherwise answers the 404 page. */
  async function permitted(res: Response, op: AdminOperation): Promise<boolean> {
    const { caller, tenant: current } = locals(res);
    const owner = await ownerOf(db, op);
    // An operator-only operation here is always on this page's tenant (its path names it).
    const onThisTenant = owner.operatorOnly || owner.tenantId === current.tenantId;
    if (!onThisTenant || refusalFor(caller, owner)) return (notFound(res), false);
    return true;
  }

  async function perform<T>(res: Response, op: AdminOperation, run: () => Promise<Outcome<T>>): Promise<T | undefined> {
    if (!(await permitted(res, op))) return undefined;
    const outcome = await run();
    if (!outcome.ok) return void refusedPage(res, outcome);
    return outcome.value;
  }

  /**
   * Destructive actions ask first: without `confirmed=yes` the answer is a page saying what will happen, with the same
   * form behind a Confirm button; nothing changes until it is pressed.
   */
  const confirmed = async (req: Request, res: Response, op: AdminOperation, fields: Record<string, string>, c: pages.Confirmation): Promise<boolean> => {
    if (one(req.body.confirmed) === 'yes') return true;
    if (!(await permitted(res, op))) return false; // only the caller's own objects are asked about
    recordNoChange();
    send(res, pages.confirmPage({ ...frameOf(res, 'Are you sure?'), session: locals(res).session }, req.originalUrl, fields, c));
    return false;
  };

  tenant.get('/', (req, res) => res.redirect(303, tenantPath(locals(res).tenant.tenantId, 'apps')));

  const appsPage = async (res: Response, entered?: pages.Entered, status = 200) => {
    const { session, tenant: current } = locals(res);
    const [apps, grants] = await Promise.all([listClients(db, current.tenantId), grantsOfTenant(db, current.tenantId)]);
    const listed = apps.map((client) => ({ client, capabilities: grants.get(client.clientId) ?? [] }));
    send(res, pages.appsPage({ ...frameOf(res, 'Apps'), session, tenant: current }, listed, entered), status);
  };
  const appPage = async (res: Response, client: ClientView, entered?: pages.Entered, status = 200) => {
    const [grants, pending, catalogue] = await Promise.all([grantsOfTenant(db, client.tenantId), hasPendingSecret(db, client.clientId), capabilityCatalogue(db)]);
    send(res, pages.appPage({ ...frameOf(res, `App: ${client.name}`), session: locals(res).session }, client, grants.get(client.clientId) ?? [], pending, catalogue, entered), status);
  };
  tenant.get('/apps', async (_req, res) => appsPage(res));

  tenant.post('/apps', async (req, res) => {
    const { tenantId } = locals(res).tenant;
    const body = {
      name: one(req.body.name), slug: one(req.body.slug), kind: one(req.body.kind), type: one(req.body.type),
      redirectUris: linesOf(req.body.redirectUris), allowedOrigins: linesOf(req.body.allowedOrigins),
    };
    if (!(await permitted(res, { method: 'POST', path: apiPath('tenants', tenantId, 'clients'), body }))) return;
    const created = await createClient(db, tenantId, body);
    if (!created.ok) return appsPage(res, enteredFrom(req, created, ['name', 'slug', 'kind', 'type', 'redirectUris', 'allowedOrigins']), STATUS_OF[created.error]);
    const { clientSecret, ...client } = created.value;
    // A confidential app's secret is shown once, in the answer to this POST (never stored readable, never cached).
    if (clientSecret) return send(res, pages.secretPage(frameOf(res, `New app: ${client.name}`), client, clientSecret, true), 201);
    await goTo(res, appPath(tenantId, client.clientId), `${client.name} is registered as ${client.clientId}.`);
  });

  tenant.get('/apps/:clientId', async (req: Request<{ clientId: string }>, res) => {
    const client = await findClient(db, locals(res).tenant.tenantId, req.params.clientId);
    if (!client) return notFound(res);
    await appPage(res, client);
  });

  tenant.post('/apps/:clientId/settings', async (req: Request<{ clientId: string }>, res) => {
    const { tenantId } = locals(res).tenant;
    const { clientId } = req.params;
    const body = { name: one(req.body.name), redirectUris: linesOf(req.body.redirectUris), allowedOrigins: linesOf(req.body.allowedOrigins) };
    if (!(await permitted(res, { method: 'PATCH', path: apiPath('clients', clientId), body }))) return;
    const updated = await updateClient(db, clientId, body);
    if (updated.ok) return goTo(res, appPath(tenantId, clientId), `Settings of ${updated.value.name} saved.`);
    const client = await findClient(db, tenantId, clientId);
    if (!client) return notFound(res);
    await appPage(res, client, enteredFrom(req, updated, ['name', 'redirectUris', 'allowedOrigins']), STATUS_OF[updated.error]);
  });

  tenant.post('/apps/:clientId/grant', async (req: Request<{ clientId: string }>, res) => {
    const { tenantId } = locals(res).tenant;
    const { clientId } = req.params;
    const body = { capabilities: list(req.body.capabilities) };
    const grant = await perform(res, { method: 'PUT', path: apiPath('tenants', tenantId, 'grants', clientId), body }, () => putGrant(db, tenantId, clientId, body));
    if (grant) await goTo(res, appPath(tenantId, clientId), `Granted capabilities saved: ${grant.capabilities.join(' ') || 'none'}.`);
  });

  tenant.post('/apps/:clientId/status', async (req: Request<{ clientId: string }>, res) => {
    const { tenantId } = locals(res).tenant;
    const { clientId } = req.params;
    const body = { status: req.body.status };
    if (body.status === 'disabled' && !(await confirmed(req, res, { method: 'PATCH', path: apiPath('clients', clientId), body }, { status: 'disabled' }, {
      consequence: `Disable ${clientId}? Its tokens are refused from their next request (403 client_disabled) and it gets no new ones until it is enabled again.`,
      back: appPath(tenantId, clientId),
    }))) return;
    const client = await perform(res, { method: 'PATCH', path: apiPath('clients', clientId), body }, () => updateClient(db, clientId, body));
    if (client) await goTo(res, appPath(tenantId, clientId), `${client.name} is now ${client.status}.`);
  });

  tenant.post('/apps/:clientId/secrets', async (req: Request<{ clientId: string }>, res) => {
    const { tenantId } = locals(res).tenant;
    const { clientId } = req.params;
    const created = await perform(res, { method: 'POST', path: apiPath('clients', clientId, 'secrets') }, () => createNextSecret(db, clientId));
    const client = created && (await findClient(db, tenantId, clientId));
    // Shown once, in the answer to the POST itself (never stored readable, never cached).
    if (created && client) send(res, pages.secretPage(frameOf(res, `New secret for ${client.name}`), client, created.clientSecret), 201);
  });

  tenant.post('/apps/:clientId/secrets/promote', async (req: Request<{ clientId: string }>, res) => {
    const { tenantId } = locals(res).tenant;
    const { clientId } = req.params;
    if (!(await confirmed(req, res, { method: 'POST', path: apiPath('clients', clientId, 'secrets', 'promote') }, {}, {
      consequence: `Promote the next secret of ${clientId}? Its current secret stops working at once: every deployment of the app must already use the next one.`,
      back: appPath(tenantId, clientId),
    }))) return;
    const client = await perform(res, { method: 'POST', path: apiPath('clients', clientId, 'secrets', 'promote') }, () => promoteNextSecret(db, clientId));
    if (client) await goTo(res, appPath(tenantId, clientId), `The next secret of ${client.name} is now its only secret; the old one no longer works.`);
  });

  tenant.get('/persons', async (req, res) => {
    const { session, tenant: current } = locals(res);
    const q = one(req.query.q)?.trim() || undefined;
    const listed = await personPage(db, current.tenantId, { q, cursor: one(req.query.cursor), limit: 50 });
    if (!listed.ok) return refusedPage(res, listed);
    send(res, pages.personsPage({ ...frameOf(res, 'Persons'), session, tenant: current }, listed.value, q));
  });

  tenant.post('/persons', async (req, res) => {
    const { session, tenant: current } = locals(res);
    const body = { displayName: one(req.body.displayName), username: one(req.body.username), password: one(req.body.password) };
    const created = await createPerson(db, current.tenantId, body);
    if (created.ok) return goTo(res, `${tenantPath(current.tenantId, 'persons')}?q=${encodeURIComponent(body.username ?? '')}`, `${created.value.displayName} can now sign in as ${body.username}.`);
    // Refused: the form again with what was typed (never the password) and why, naming the field.
    const listed = await personPage(db, current.tenantId, { limit: 50 });
    const entered = { displayName: body.displayName, username: body.username, problem: `${REFUSAL_TEXT[created.error] ?? 'That could not be done'}: ${created.message ?? created.error}.` };
    send(res, pages.personsPage({ ...frameOf(res, 'Persons'), session, tenant: current }, listed.ok ? listed.value : { items: [], nextCursor: null }, undefined, entered), STATUS_OF[created.error]);
  });

  tenant.get('/persons/:accountId', async (req: Request<{ accountId: string }>, res) => {
    const { session, tenant: current } = locals(res);
    const consents = await consentsOf(db, current.tenantId, req.params.accountId);
    if (!consents) return notFound(res);
    send(res, pages.personPage({ ...frameOf(res, 'Person'), session, tenant: current }, req.params.accountId, consents));
  });

  tenant.post('/persons/:accountId/sessions/revoke', async (req: Request<{ accountId: string }>, res) => {
    const { tenantId } = locals(res).tenant;
    const { accountId } = req.params;
    const op = { method: 'POST', path: apiPath('accounts', accountId, 'sessions', 'revoke') } as const;
    const back = tenantPath(tenantId, `persons/${encodeURIComponent(accountId)}`);
    if (!(await confirmed(req, res, op, {}, {
      consequence: `End every session of the login ${accountId}? Every app's tokens for this person are refused from their next request, and each app needs a new consent.`,
      back,
    }))) return;
    await perform(res, op, () => revokeSessions(db, accountId));
    // A refusal has answered with its page; otherwise back to the person.
    if (!res.headersSent) await goTo(res, back, 'Every session of this login is ended.');
  });

  tenant.post('/persons/:accountId/status', async (req: Request<{ accountId: string }>, res) => {
    const { tenantId } = locals(res).tenant;
    const { accountId } = req.params;
    const body = { status: req.body.status };
    if (body.status === 'disabled' && !(await confirmed(req, res, { method: 'PATCH', path: apiPath('accounts', accountId), body }, { status: 'disabled' }, {
      consequence: `Disable the login ${accountId}? The person can no longer sign in, and their tokens are refused from their next request until it is enabled again.`,
      back: tenantPath(tenantId, 'persons'),
    }))) return;
    const account = await perform(res, { method: 'PATCH', path: apiPath('accounts', accountId), body }, () => setAccountStatus(db, accountId, body));
    if (account) await goTo(res, tenantPath(tenantId, 'persons'), `The login ${account.accountId} is now ${account.status}.`);
  });

  tenant.get('/service-accounts', async (_req, res) => {
    const { session, tenant: current } = locals(res);
    send(res, pages.serviceAccountsPage({ ...frameOf(res, 'Service accounts'), session, tenant: current }, await listServiceAccounts(db, current.tenantId)));
  });

  tenant.post('/service-accounts/:accountId/epoch', async (req: Request<{ accountId: string }>, res) => {
    const { tenantId } = locals(res).tenant;
    const { accountId } = req.params;
    if (!(await confirmed(req, res, { method: 'POST', path: apiPath('accounts', accountId, 'epoch') }, {}, {
      consequence: `Advance the epoch of ${accountId}? Every token it holds now is refused from its next request (403 epoch_changed); new tokens work.`,
      back: tenantPath(tenantId, 'service-accounts'),
    }))) return;
    const advanced = await perform(res, { method: 'POST', path: apiPath('accounts', accountId, 'epoch') }, () => advanceEpoch(db, accountId));
    if (advanced) await goTo(res, tenantPath(tenantId, 'service-accounts'), `The epoch of ${advanced.accountId} is now ${advanced.epoch}; its older tokens are refused.`);
  });

  tenant.post('/service-accounts/:accountId/status', async (req: Request<{ accountId: string }>, res) => {
    const { tenantId } = locals(res).tenant;
    const { accountId } = req.params;
    const body = { status: req.body.status };
    if (body.status === 'disabled' && !(await confirmed(req, res, { method: 'PATCH', path: apiPath('accounts', accountId), body }, { status: 'disabled' }, {
      consequence: `Disable ${accountId}? Its tokens are refused from their next request (403 subject_revoked) until it is enabled again.`,
      back: tenantPath(tenantId, 'service-accounts'),
    }))) return;
    const account = await perform(res, { method: 'PATCH', path: apiPath('accounts', accountId), body }, () => setAccountStatus(db, accountId, body));
    if (account) await goTo(res, tenantPath(tenantId, 'service-accounts'), `${account.accountId} is now ${account.status}.`);
  });

  const extensionsPage = async (res: Response, entered?: pages.Entered, status = 200) => {
    const { session, tenant: current } = locals(res);
    const [extensions, apps] = await Promise.all([listExtensions(db, current.tenantId), listClients(db, current.tenantId)]);
    send(res, pages.extensionsPage({ ...frameOf(res, 'Extensions'), session, tenant: current }, extensions, apps, entered), status);
  };

  tenant.get('/extensions', async (_req, res) => extensionsPage(res));

  tenant.post('/extensions', async (req, res) => {
    const { tenantId } = locals(res).tenant;
    const clientId = one(req.body.clientId) ?? '';
    // Refused: the form again as it was sent, saying which part was not accepted.
    const again = (refusal: Refusal) => extensionsPage(res, enteredFrom(req, refusal, ['clientId', 'name', 'schema']), STATUS_OF[refusal.error]);
    let schema: unknown;
    try {
      schema = JSON.parse(one(req.body.schema) ?? '');
    } catch (err) {
      return again({ ok: false, error: 'schema_invalid', message: `the schema is not valid JSON (${(err as Error).message})` });
    }
    const body = { name: req.body.name, schemas: { 1: schema } };
    // The same limits as the admin API's body, checked on the same body.
    const problem = jsonInputProblem(body, MAX_BODY_DEPTH);
    if (problem) return again({ ok: false, error: 'schema_invalid', message: `the schema ${problem}` });
    const op = { method: 'POST', path: apiPath('clients', clientId, 'extensions'), body } as const;
    if (!(await permitted(res, op))) return;
    const registered = await registerExtension(db, clientId, body);
    if (!registered.ok) return registered.error === 'not_found' ? notFound(res) : again({ ...registered, message: registered.message?.replace(/^schemas\.1: /, 'the JSON Schema: ') });
    await goTo(res, tenantPath(tenantId, 'extensions'), `Registered ${registered.value.name} as ${registered.value.extensionId}.`);
  });

  const settingsPage = async (res: Response, entered?: pages.Entered, status = 200) => {
    const { session, caller, tenant: current } = locals(res);
    const keys = caller.kind === 'operator' ? await adminKeyPage(db, current.tenantId, { limit: 100 }) : undefined;
    const limits = (current.rateLimit as pages.RateLimitView | undefined) ?? DEFAULT_RATE_LIMIT;
    send(res, pages.tenantSettingsPage({ ...frameOf(res, 'Settings'), session, tenant: current }, limits, keys?.ok ? keys.value.items : undefined, entered), status);
  };
  const SETTINGS_FIELDS = ['displayName', 'plan', 'status', 'tenantPoints', 'tenantDurationS', 'accountPoints', 'accountDurationS'];

  tenant.get('/settings', async (_req, res) => settingsPage(res));

  tenant.post('/settings', async (req, res) => {
    const { caller, tenant: current } = locals(res);
    const field = (name: string) => one(req.body[name]);
    const count = (name: string) => (field(name)?.trim() ? Number(field(name)) : undefined);
    const window = (layer: string) => ({ points: count(`${layer}Points`), durationS: count(`${layer}DurationS`) });
    const rateLimit = { tenant: window('tenant'), account: window('account') };
    const currentLimits = (current.rateLimit as pages.RateLimitView | undefined) ?? DEFAULT_RATE_LIMIT;
    const body = {
      displayName: field('displayName'),
      // Limits are sent only when changed, so a tenant admin can rename a tenant whose limits the operator raised
      // beyond the plan's ceiling.
      ...((['tenant', 'account'] as const).some((l) => rateLimit[l].points !== currentLimits[l].points || rateLimit[l].durationS !== currentLimits[l].durationS) && { rateLimit }),
      // Plan and status are the operator's; a tenant admin's form has neither.
      ...(caller.kind === 'operator' && { plan: field('plan'), status: field('status') }),
    };
    const op = { method: 'PATCH', path: apiPath('tenants', current.tenantId), body } as const;
    const sent = Object.fromEntries(SETTINGS_FIELDS.flatMap((f) => (field(f) === undefined ? [] : [[f, field(f)!]])));
    if (body.status === 'suspended' && current.status !== 'suspended' && !(await confirmed(req, res, op, sent, {
      consequence: `Suspend ${current.displayName}? Every token of its apps is refused from its next request (403 tenant_suspended) until it is active again.`,
      back: tenantPath(current.tenantId, 'settings'),
    }))) return;
    if (!(await permitted(res, op))) return;
    const updated = await updateTenant(db, current.tenantId, body, caller);
    if (!updated.ok) return settingsPage(res, enteredFrom(req, updated, SETTINGS_FIELDS), STATUS_OF[updated.error]);
    await goTo(res, tenantPath(current.tenantId, 'settings'), `Settings of ${updated.value.displayName} saved.`);
  });

  tenant.post('/admin-keys', async (_req, res) => {
    const { tenant: current } = locals(res);
    const issued = await perform(res, { method: 'POST', path: apiPath('tenants', current.tenantId, 'admin-keys') }, () => createAdminKey(db, current.tenantId));
    // Shown once, in the answer to the POST itself.
    if (issued) send(res, pages.adminKeyPage({ ...frameOf(res, 'New admin key'), tenant: current }, issued), 201);
  });

  tenant.post('/admin-keys/:keyId/revoke', async (req: Request<{ keyId: string }>, res) => {
    const { tenant: current } = locals(res);
    const { keyId } = req.params;
    const op = { method: 'DELETE', path: apiPath('tenants', current.tenantId, 'admin-keys', keyId) } as const;
    if (!(await confirmed(req, res, op, {}, {
      consequence: `Revoke the admin key ${keyId}? Calls with it are refused at once and every console session signed in with it ends.`,
      back: tenantPath(current.tenantId, 'settings'),
    }))) return;
    await perform(res, op, () => revokeAdminKey(db, current.tenantId, keyId));
    // A refusal has answered with its page; otherwise back to the settings.
    if (!res.headersSent) await goTo(res, tenantPath(current.tenantId, 'settings'), `The admin key ${keyId} is revoked.`);
  });

  tenant.get('/decisions', async (req, res) => {
    const { tenant: current } = locals(res);
    // An empty field is "any"; the rest are the admin API's filters, checked there.
    const filters: DecisionFilters = Object.fromEntries(
      (['requestId', 'clientId', 'outcome', 'code', 'capability'] as const).map((f) => [f, one(req.query[f])?.trim() || undefined]),
    );
    const [outcome, apps] = await Promise.all([
      recentDecisions(db, current.tenantId, { ...filters, limit: DECISIONS_SHOWN, cursor: one(req.query.cursor) || undefined }),
      listClients(db, current.tenantId),
    ]);
    if (!outcome.ok) return refusedPage(res, outcome);
    const choices = { apps: apps.map((a) => a.clientId), codes: DENY_CODES, capabilities: CAPABILITIES };
    send(res, pages.decisionsPage({ ...frameOf(res, 'Decisions'), tenant: current }, outcome.value, filters, choices));
  });

  tenant.get('/usage', async (_req, res) => {
    const { tenantId } = locals(res).tenant;
    const [total, days] = await Promise.all([usage(db, tenantId), usagePerDay(db, tenantId)]);
    if (!total.ok) return refusedPage(res, total);
    if (!days.ok) return refusedPage(res, days);
    send(res, pages.usagePage(frameOf(res, 'Usage'), total.value.total, days.value));
  });

  tenant.get('/audit', async (req, res) => {
    const { tenant: current } = locals(res);
    const filters = { action: one(req.query.action)?.trim() || undefined, since: one(req.query.since)?.trim() || undefined };
    const outcome = await auditPage(db, current.tenantId, { ...filters, cursor: one(req.query.cursor) || undefined, limit: 50 });
    if (!outcome.ok) return refusedPage(res, outcome);
    send(res, pages.auditPage({ ...frameOf(res, 'Audit'), tenant: current }, outcome.value, filters));
  });

  tenant.get('/export', async (_req, res) => {
    const { tenant: current } = locals(res);
    send(res, pages.exportPage({ ...frameOf(res, 'Export'), tenant: current }, await listExtensions(db, current.tenantId)));
  });

  tenant.get('/export/download', async (req, res) => {
    const { tenant: current } = locals(res);
    const extensionId = one(req.query.extensionId) || undefined;
    await streamExport(db, log, req, res, {
      tenantId: current.tenantId, query: extensionId ? { extensionId } : {}, refuse: (refusal) => refusedPage(res, refusal),
      attachment: `${current.label}-records.ndjson`,
    });
  });

  r.use((_req, res) => notFound(res));
  r.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const e = err as { type?: string };
    if (res.headersSent) return void res.end();
    if (e?.type === 'entity.too.large' || e?.type === 'parameters.too.many') return problem(res, 413, 'Too large', 'That form was too large.');
    if (e?.type !== undefined || err instanceof URIError) return problem(res, 400, 'Not accepted', 'That request could not be read.');
    // Text PostgreSQL cannot store: a lookup by it is a miss, a write of it is refused.
    if (isClientDataError(err)) return req.method === 'GET' ? notFound(res) : problem(res, 422, 'Not accepted', 'That contains characters that cannot be stored.');
    log.error({ err, requestId: requestIdOf(res), path: req.path }, 'admin console error');
    problem(res, 503, 'Temporarily unavailable', 'The console could not do that just now. Nothing is shown about why here; try again shortly.');
  });
  return r;
}
