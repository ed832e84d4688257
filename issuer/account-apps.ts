// Connected apps, for the person (platform-interfaces.md): {auth_url}/account/apps. The person signs in with the same
// form and credential check as the authorize step, sees every app they allowed (name, tenant, capabilities, when
// allowed, last token), and "Revoke access" ends that app's consent: every token family of the app for this person is
// killed (refresh tokens invalid_grant, access tokens 403 subject_revoked at the PDP), and consent is asked again.
//
// The page's session is a signed cookie (HMAC with the issuer's cookie key), SameSite=Strict, HttpOnly, 15 minutes,
// scoped to /account: no server state. Every form carries the session's CSRF token as well.
import express, { type ErrorRequestHandler, type Request, type Response, type Router } from 'express';
import cookieParser from 'cookie-parser';
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { Logger } from '../common/log.js';
import { killFamily } from '../common/sessions.js';
import { sameSecret } from '../common/secrets.js';
import { sealer } from '../common/sealed-values.js';
import { overHttps } from '../common/page-security.js';
import { storableText } from '../common/db.js';
import { signIn, signInRefusal } from './accounts.js';
import type { CredentialThrottle } from '../common/credential-throttle.js';
import { API_RESOURCE, describeCapabilities, splitScope } from './scope-policy.js';
import {
  connectedAppsPage,
  errorPage,
  accountSignInPage,
  sendPage,
  sendUnavailablePage,
  type ConnectedApp,
} from './pages.js';

const ACCOUNT_APPS_PATH = '/account/apps';
const COOKIE = 'account_session';
const SESSION_MS = 15 * 60 * 1000;

interface AccountSession {
  personId: string;
  csrf: string;
  exp: number;
}

/** Seals and opens the page's session cookie: base64url(JSON), sealed with the issuer's cookie key. */
function sessionCodec(key: string) {
  const sealed = sealer(key, 'account-apps session v1');
  return {
    seal: (session: AccountSession): string => sealed.seal(Buffer.from(JSON.stringify(session)).toString('base64url')),
    open(value: unknown): AccountSession | undefined {
      const body = sealed.open(value);
      if (!body) return undefined;
      try {
        const s = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as AccountSession;
        return typeof s.personId === 'string' && typeof s.csrf === 'string' && s.exp > Date.now() ? s : undefined;
      } catch {
        return undefined;
      }
    },
  };
}

const sameToken = (given: unknown, expected: string) => typeof given === 'string' && sameSecret(given, expected);

/** The apps `personId` allowed, one row per app: its live consents (sessions whose Grant is still stored). */
async function connectedApps(knex: Knex, personId: string): Promise<ConnectedApp[]> {
  const rows: {
    client_id: string;
    app: string;
    tenant: string;
    scope: string | null;
    allowed_at: Date;
    last_token_at: number | null;
  }[] = await knex('sessions as s')
    .join('accounts as a', 'a.id', 's.account_id')
    .join('clients as c', 'c.id', 's.client_id')
    .join('tenants as t', 't.id', 'c.tenant_id')
    .join('oidc_payloads as g', function () {
      this.on('g.id', '=', 's.id').andOnVal('g.model', '=', 'Grant');
    })
    .where({ 'a.person_id': personId, 'a.kind': 'person' })
    .whereNull('s.revoked_at')
    .andWhere((q) => void q.whereNull('g.expires_at').orWhere('g.expires_at', '>', knex.fn.now()))
    .select(
      's.client_id',
      'c.name as app',
      't.display_name as tenant',
      's.created_at as allowed_at',
      knex.raw(`g.payload->'resources'->>? as scope`, [API_RESOURCE]),
      knex.raw(
        `(select max((r.payload->>'iat')::bigint) from oidc_payloads r ` +
          `where r.grant_id = s.id and r.model = 'RefreshToken') as last_token_at`,
      ),
    )
    .orderBy('s.created_at', 'desc');
  const byApp = new Map<
    string,
    { app: string; tenant: string; scopes: Set<string>; allowedAt: Date; lastTokenAt: number | null }
  >();
  for (const r of rows) {
    const entry = byApp.get(r.client_id) ?? {
      app: r.app,
      tenant: r.tenant,
      scopes: new Set<string>(),
      allowedAt: r.allowed_at,
      lastTokenAt: null,
    };
    for (const s of splitScope(r.scope)) entry.scopes.add(s);
    if (r.last_token_at !== null && (entry.lastTokenAt === null || Number(r.last_token_at) > entry.lastTokenAt))
      entry.lastTokenAt = Number(r.last_token_at);
    byApp.set(r.client_id, entry);
  }
  return Promise.all(
    [...byApp].map(async ([clientId, e]) => ({
      clientId,
      name: e.app,
      tenant: e.tenant,
      allowedAt: e.allowedAt.toISOString(),
      lastTokenAt: e.lastTokenAt === null ? undefined : new Date(e.lastTokenAt * 1000).toISOString(),
      capabilities: await describeCapabilities(knex, [...e.scopes]),
    })),
  );
}

/** Ends every consent of `personId` for `clientId`: each family killed, so tokens and refresh tokens stop working. */
async function revokeApp(knex: Knex, personId: string, clientId: string): Promise<number> {
  const grants: { id: string }[] = await knex('sessions as s')
    .join('accounts as a', 'a.id', 's.account_id')
    .where({ 'a.person_id': personId, 'a.kind': 'person', 's.client_id': clientId })
    .whereNull('s.revoked_at')
    .select('s.id');
  for (const { id } of grants) await killFamily(knex, id);
  return grants.length;
}

export interface AccountAppsDeps {
  knex: Knex;
  log: Logger;
  /** HMAC key for the page's session cookie (the issuer's first cookie key). */
  cookieKey: string;
  /** Failed sign-ins per username and address, the same counters as the authorize step's. */
  throttle: CredentialThrottle;
}

export function accountAppsRoutes({ knex, log, cookieKey, throttle }: AccountAppsDeps): Router {
  const router = express.Router();
  const codec = sessionCodec(cookieKey);
  const form = express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 10 });
  const setSession = (req: Request, res: Response, session: AccountSession | undefined) =>
    res.cookie(COOKIE, session ? codec.seal(session) : '', {
      httpOnly: true,
      sameSite: 'strict',
      secure: overHttps(req),
      path: '/account',
      ...(session ? { maxAge: SESSION_MS } : { maxAge: 0 }),
    });
  const sessionOf = (req: Request) => codec.open(req.cookies?.[COOKIE]);

  const handle = (fn: (req: Request, res: Response) => Promise<void>) => async (req: Request, res: Response) => {
    try {
      await fn(req, res);
    } catch (err) {
      log.error({ err }, 'connected apps page failed');
      sendUnavailablePage(res, 'This page');
    }
  };
  const showApps = async (res: Response, session: AccountSession, notice?: string) =>
    sendPage(
      res,
      'Connected apps',
      connectedAppsPage({ apps: await connectedApps(knex, session.personId), csrf: session.csrf, notice }),
    );

  router.use('/account', cookieParser());

  router.get(
    ACCOUNT_APPS_PATH,
    handle(async (req, res) => {
      const session = sessionOf(req);
      if (!session) return sendPage(res, 'Sign in - connected apps', accountSignInPage({}));
      const notice =
        req.query.revoked === '1' ? 'Access revoked. The app must ask you again before it can act for you.' : undefined;
      await showApps(res, session, notice);
    }),
  );

  router.post(
    ACCOUNT_APPS_PATH,
    form,
    handle(async (req, res) => {
      const username = typeof req.body?.username === 'string' ? req.body.username : '';
      const password = typeof req.body?.password === 'string' ? req.body.password : '';
      const result = await signIn(knex, throttle, { username, password, address: req.ip ?? 'unknown' });
      if (!result.ok) {
        const { status, message, headers } = signInRefusal(result);
        return sendPage(res, 'Sign in - connected apps', accountSignInPage({ error: message, username }), {
          status,
          ...(headers && { headers }),
        });
      }
      const personId = result.value;
      setSession(req, res, { personId, csrf: randomBytes(24).toString('base64url'), exp: Date.now() + SESSION_MS });
      res.redirect(303, ACCOUNT_APPS_PATH);
    }),
  );

  router.post(
    `${ACCOUNT_APPS_PATH}/revoke`,
    form,
    handle(async (req, res) => {
      const session = sessionOf(req);
      if (!session || !sameToken(req.body?._csrf, session.csrf)) {
        return sendPage(
          res,
          'Not accepted',
          errorPage('That form has expired. Open the connected apps page and try again.'),
          { status: 403 },
        );
      }
      const clientId =
        typeof req.body?.clientId === 'string' && storableText(req.body.clientId) ? req.body.clientId : '';
      await revokeApp(knex, session.personId, clientId);
      res.redirect(303, `${ACCOUNT_APPS_PATH}?revoked=1`);
    }),
  );

  router.post(
    '/account/sign-out',
    form,
    handle(async (req, res) => {
      const session = sessionOf(req);
      if (session && sameToken(req.body?._csrf, session.csrf)) setSession(req, res, undefined);
      res.redirect(303, ACCOUNT_APPS_PATH);
    }),
  );

  // Form bodies the parser refuses get a page, never Express's stack-trace page.
  router.use('/account', ((_err, _req, res, _next) => {
    sendPage(res, 'Error', errorPage('The form could not be read.'), { status: 400 });
  }) as ErrorRequestHandler);
  return router;
}
