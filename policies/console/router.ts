// The admin console (docs/admin-console.md): server-rendered pages on the admin service for tenant admins and the
// operator. This file holds what every page shares (security headers, the session, CSRF, signing in and out, the
// operator's tenant list, the tenant a page belongs to, errors); each page group is a file of its own (apps.ts,
// persons.ts, ...). Each action names the admin API operation it is and passes the same authority check
// (policies/admin/authority.ts) and the same operation code (policies/admin/*) as the JSON API.
import express, { Router, type NextFunction, type Request, type Response } from 'express';
import cookieParser from 'cookie-parser';
import type { Knex } from 'knex';
import { isClientDataError, requestIdOf } from '../../common/http.js';
import { overHttps, pageSecurityHeaders } from '../../common/page-security.js';
import { HashingBusy, sameSecret } from '../../common/secrets.js';
import type { Logger } from '../../common/log.js';
import { waitMessage, wrongCredential, type CredentialThrottle } from '../../common/credential-throttle.js';
import { STATUS_OF } from '../../wire/codes.js';
import { adminIdentifier, type AdminCaller } from '../admin/authority.js';
import { tenantAdminKeyLive } from '../admin/admin-key-store.js';
import { createTenant, findTenant, listTenants } from '../admin/tenants.js';
import { auditedChanges, scopedKnex } from '../admin/audit.js';
import { SCRIPT, STYLE } from './html.js';
import { SessionStore, type ConsoleSession } from './sessions.js';
import { SIGN_IN_COOKIE, signInCsrf } from './sign-in-csrf.js';
import { consoleKit, locals, one } from './kit.js';
import { appRoutes } from './apps.js';
import { personRoutes } from './persons.js';
import { serviceAccountRoutes } from './service-accounts.js';
import { extensionRoutes } from './extensions.js';
import { tenantSettingsRoutes } from './tenant-settings.js';
import { recordRoutes } from './records.js';
import * as pages from './pages.js';

const { CONSOLE_PATH, tenantPath } = pages;
const COOKIE = 'console_session';
/** Sign in's `ended` when a session ended because its tenant admin key was revoked, and what the page then says. */
const KEY_REVOKED = 'key-revoked';
const KEY_REVOKED_TEXT =
  'Your session ended because the admin key you signed in with was revoked. Sign in with a current key; the ' +
  'operator issues new ones.';
/** The issuer's token endpoint under AUTH_URL (platform-interfaces.md). */
const TOKEN_PATH = '/oauth2/token';

const SECURITY_HEADERS = pageSecurityHeaders(STYLE, SCRIPT)();

export interface ConsoleDeps {
  knex: Knex;
  adminToken: string;
  log: Logger;
  /** Told of each committed admin change's action (admin_changes_total). */
  countChange?: (action: string) => void;
  /** Wrong keys per address, shared with the admin API's bearers. */
  throttle: CredentialThrottle;
  /** The issuer's public URL (AUTH_URL). */
  authUrl: string;
  /** Whether the issuer offers the client_credentials grant (ISSUER_ENABLE_CLIENT_CREDENTIALS, one setting for all). */
  clientCredentials: boolean;
}

export function consoleRouter({
  knex,
  adminToken,
  log,
  countChange,
  throttle,
  authUrl,
  clientCredentials,
}: ConsoleDeps): Router {
  const r = Router();
  // The session store joins an audited change's transaction too (it leaves the change's notice), so a page never
  // waits for a second connection that the embedded database, with one, cannot give while the change runs.
  const sessions = new SessionStore(scopedKnex(knex));
  const identifyAdmin = adminIdentifier(knex, adminToken);

  const db = scopedKnex(knex);
  const kit = consoleKit(db, sessions, log, {
    tokenEndpoint: `${authUrl.replace(/\/$/, '')}${TOKEN_PATH}`,
    clientCredentials,
  });
  const { send, problem, notFound, goTo, enteredFrom } = kit;
  const setCookie = (req: Request, res: Response, session: ConsoleSession) =>
    res.cookie(COOKIE, session.id, { httpOnly: true, sameSite: 'strict', secure: overHttps(req), path: CONSOLE_PATH });
  const signInForm = signInCsrf(adminToken);
  /** The sign-in form's token: the one its cookie already vouches for, or a new one with its cookie. */
  const signInToken = (req: Request, res: Response) => {
    const kept = signInForm.tokenOf(one(req.cookies?.[SIGN_IN_COOKIE]));
    if (kept) return kept;
    const { token, cookie } = signInForm.issue();
    res.cookie(SIGN_IN_COOKIE, cookie, {
      httpOnly: true,
      sameSite: 'strict',
      secure: overHttps(req),
      path: CONSOLE_PATH,
    });
    return token;
  };
  r.use((_req, res, next) => (res.set(SECURITY_HEADERS), next()));
  r.use(cookieParser(), express.urlencoded({ extended: false, limit: '64kb', parameterLimit: 100 }));

  // The session, if any; a tenant admin key revoked since sign-in ends it, and Sign in then says why.
  r.use(async (req, res, next) => {
    // A page view shows the notice an earlier action left, once.
    const session = await sessions.get(one(req.cookies?.[COOKIE]), req.method === 'GET');
    const caller = session?.caller;
    if (caller?.kind === 'tenant' && !(await tenantAdminKeyLive(knex, caller.tenantId, caller.keyId))) {
      await sessions.destroy(session!.id);
      res.locals.signInPath = `${CONSOLE_PATH}/sign-in?${new URLSearchParams({ ended: KEY_REVOKED })}`;
    } else if (session) res.locals.session = session;
    next();
  });
  /** Where a visitor without a session goes: Sign in, saying why when their key was revoked. */
  const signInPath = (res: Response) => (res.locals.signInPath as string | undefined) ?? `${CONSOLE_PATH}/sign-in`;

  // Every POST carries the session's CSRF token in a hidden field, or (the sign-in form, before any session) the token
  // of its signed cookie; anything else is refused before it does anything.
  r.use((req, res, next) => {
    if (req.method !== 'POST') return next();
    const session = res.locals.session as ConsoleSession | undefined;
    const presented = one(req.body?._csrf);
    const expected = session
      ? session.csrf
      : req.path === '/sign-in'
        ? signInForm.tokenOf(one(req.cookies?.[SIGN_IN_COOKIE]))
        : undefined;
    if (expected && presented && sameSecret(presented, expected)) return next();
    problem(
      res,
      403,
      'Form refused',
      'This form was not sent from a current console page, so nothing was changed. Reload the page and try again.',
    );
  });

  r.get('/', (_req, res) => {
    const caller = (res.locals.session as ConsoleSession | undefined)?.caller;
    if (!caller) return res.redirect(303, signInPath(res));
    res.redirect(303, caller.kind === 'operator' ? `${CONSOLE_PATH}/tenants` : tenantPath(caller.tenantId, 'apps'));
  });

  r.get('/sign-in', (req, res) => {
    if ((res.locals.session as ConsoleSession | undefined)?.caller) return res.redirect(303, `${CONSOLE_PATH}/`);
    const why = one(req.query.ended) === KEY_REVOKED ? KEY_REVOKED_TEXT : undefined;
    send(res, pages.signInPage({ csrf: signInToken(req, res) }, undefined, why));
  });

  r.post('/sign-in', async (req, res) => {
    const old = res.locals.session as ConsoleSession | undefined;
    const key = one(req.body.key)?.trim();
    let caller: AdminCaller | undefined;
    try {
      caller = key ? await identifyAdmin(key) : undefined;
    } catch (err) {
      if (!(err instanceof HashingBusy)) throw err; // only a key still stored with scrypt is hashed (secrets.ts)
      res.set('retry-after', String(err.retryAfterS));
      return problem(res, 503, 'Busy', 'Signing in is busy just now. Try again in a few seconds.');
    }
    // The right key signs in whatever others sent from this address (checked first, in microseconds); only wrong
    // ones are counted, and past the address's budget told to wait.
    if (!caller) {
      const waitS = await wrongCredential(throttle, req.ip ?? 'unknown');
      if (waitS !== undefined) {
        res.set('retry-after', String(waitS));
        return send(res, pages.signInPage({ csrf: one(req.body._csrf)! }, waitMessage(waitS)), 429);
      }
      return send(
        res,
        pages.signInPage({ csrf: one(req.body._csrf)! }, 'That key did not work. Check it and try again.'),
        401,
      );
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
    if (!caller) return req.method === 'GET' ? res.redirect(303, signInPath(res)) : notFound(res);
    res.locals.caller = caller;
    next();
  });

  // Every change made in the console runs in one transaction with its audit entry, as in the admin API; the operations
  // query through `db`, which joins that transaction.
  const audited = auditedChanges(knex, log, (res) => locals(res).caller, countChange);

  r.get('/tenants', async (_req, res) => {
    const { session, caller } = locals(res);
    if (caller.kind !== 'operator') return notFound(res);
    send(res, pages.tenantsPage(session, await listTenants(knex)));
  });

  r.post('/tenants', audited, async (req, res) => {
    const { session, caller } = locals(res);
    if (caller.kind !== 'operator') return notFound(res);
    const created = await createTenant(db, {
      displayName: one(req.body.displayName),
      label: one(req.body.label),
      plan: one(req.body.plan),
    });
    if (!created.ok)
      return send(
        res,
        pages.tenantsPage(session, await listTenants(db), enteredFrom(req, created, ['displayName', 'label', 'plan'])),
        STATUS_OF[created.error],
      );
    await goTo(
      res,
      tenantPath(created.value.tenantId, 'settings'),
      `${created.value.displayName} is created (${created.value.label}, plan ${created.value.plan}).`,
    );
  });

  const tenant = Router({ mergeParams: true });
  tenant.use(audited);
  r.use(
    '/tenants/:tenantId',
    async (req: Request<{ tenantId: string }>, res: Response, next: NextFunction) => {
      const { caller } = locals(res);
      const { tenantId } = req.params;
      // A tenant admin key sees only its own tenant; any other answers as if it did not exist.
      const found =
        caller.kind === 'tenant' && caller.tenantId !== tenantId ? undefined : await findTenant(db, tenantId);
      if (!found) return notFound(res);
      res.locals.tenant = found;
      next();
    },
    tenant,
  );

  tenant.get('/', (req, res) => res.redirect(303, tenantPath(locals(res).tenant.tenantId, 'apps')));
  // One file per page group.
  for (const routes of [
    appRoutes,
    personRoutes,
    serviceAccountRoutes,
    extensionRoutes,
    tenantSettingsRoutes,
    recordRoutes,
  ])
    routes(tenant, kit);

  r.use((_req, res) => notFound(res));
  r.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const e = err as { type?: string };
    if (res.headersSent) return void res.end();
    if (e?.type === 'entity.too.large' || e?.type === 'parameters.too.many')
      return problem(res, 413, 'Too large', 'That form was too large.');
    if (e?.type !== undefined || err instanceof URIError)
      return problem(res, 400, 'Not accepted', 'That request could not be read.');
    // Text PostgreSQL cannot store: a lookup by it is a miss, a write of it is refused.
    if (isClientDataError(err))
      return req.method === 'GET'
        ? notFound(res)
        : problem(res, 422, 'Not accepted', 'That contains characters that cannot be stored.');
    log.error({ err, requestId: requestIdOf(res), path: req.path }, 'admin console error');
    problem(
      res,
      503,
      'Temporarily unavailable',
      'The console could not do that just now. Nothing is shown about why here; try again shortly.',
    );
  });
  return r;
}
