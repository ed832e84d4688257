// Login and consent (oidc-provider "interactions"). The interaction is found through oidc-provider's signed
// _interaction cookie, scoped to /interaction/<uid> and SameSite=Lax: a cross-site form post arrives without it and
// fails, so these forms need no separate CSRF token.
import express, { type ErrorRequestHandler, type Request, type Response, type Router } from 'express';
import type { Knex } from 'knex';
import { errors, type Provider } from 'oidc-provider';
import type { Logger } from '../common/log.js';
import { noteCaller } from '../common/http.js';
import { loginAccountOf, signIn, signInRefusal, tenantOfClient } from './accounts.js';
import type { CredentialThrottle } from '../common/credential-throttle.js';
import { API_RESOURCE, allowedCapabilities, describeCapabilities } from './scope-policy.js';
import { consentPage, errorPage, loginPage, sendPage, sendUnavailablePage } from './pages.js';

type Details = Awaited<ReturnType<Provider['interactionDetails']>>;

interface Deps {
  provider: Provider;
  knex: Knex;
  log: Logger;
  /** Failed sign-ins per username and address (shared with the connected-apps page). */
  throttle: CredentialThrottle;
}

export function interactionRoutes({ provider, knex, log, throttle }: Deps): Router {
  const router = express.Router();
  const form = express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 10 });

  /** The interaction this browser is in, checked against the URL so a stale tab cannot act on a newer one. */
  async function current(req: Request, res: Response) {
    const details = await provider.interactionDetails(req, res);
    if (details.uid !== req.params.uid) throw new errors.SessionNotFound('interaction mismatch');
    const clientId = String(details.params.client_id);
    const client = await provider.Client.find(clientId);
    if (!client) throw new errors.SessionNotFound('client no longer available');
    const tenantId = await tenantOfClient(knex, clientId);
    if (!tenantId) throw new errors.SessionNotFound('client no longer available');
    noteCaller(res, { tenant: tenantId, client: clientId });
    return {
      details,
      client,
      clientId,
      tenantId,
      appName: client.clientName ?? clientId,
      redirectOrigin: originOf(details),
    };
  }

  /** Capabilities the consent is about: those requested that the client may still receive. */
  async function consentCapabilities(details: Details, clientId: string): Promise<string[]> {
    const missing =
      (details.prompt.details.missingResourceScopes as Record<string, string[]> | undefined)?.[API_RESOURCE] ?? [];
    const allowed = new Set<string>(await allowedCapabilities(knex, clientId));
    return missing.filter((s) => allowed.has(s));
  }

  const handle = (fn: (req: Request, res: Response) => Promise<void>) => async (req: Request, res: Response) => {
    try {
      await fn(req, res);
    } catch (err) {
      if (err instanceof errors.SessionNotFound) {
        sendPage(res, 'Request expired', errorPage('This sign-in request has expired or is no longer valid.'), {
          status: 400,
        });
      } else {
        log.error({ err }, 'interaction failed');
        sendUnavailablePage(res);
      }
    }
  };

  router.get(
    '/interaction/:uid',
    handle(async (req, res) => {
      const { details, clientId, tenantId, appName, redirectOrigin } = await current(req, res);
      if (details.prompt.name === 'login') {
        sendPage(res, `Sign in - ${appName}`, loginPage({ uid: details.uid, appName }), { redirectOrigin });
        return;
      }
      if (details.prompt.name === 'consent') {
        const [tenant, capabilities] = await Promise.all([
          knex('tenants').where('id', tenantId).first('display_name'),
          consentCapabilities(details, clientId).then((ids) => describeCapabilities(knex, ids)),
        ]);
        const view = { uid: details.uid, appName, tenantName: tenant?.display_name ?? '', capabilities };
        sendPage(res, `Allow access - ${appName}`, consentPage(view), { redirectOrigin });
        return;
      }
      sendPage(res, 'Error', errorPage('This request cannot be completed here.'), { status: 400 });
    }),
  );

  router.post(
    '/interaction/:uid/login',
    form,
    handle(async (req, res) => {
      const { details, tenantId, appName, redirectOrigin } = await current(req, res);
      if (details.prompt.name !== 'login') throw new errors.SessionNotFound('not at the login step');
      const username = typeof req.body?.username === 'string' ? req.body.username : '';
      const password = typeof req.body?.password === 'string' ? req.body.password : '';
      const result = await signIn(knex, throttle, { username, password, address: req.ip ?? 'unknown', tenantId });
      if (!result.ok) {
        const { status, message, headers } = signInRefusal(result);
        sendPage(res, `Sign in - ${appName}`, loginPage({ uid: details.uid, appName, error: message, username }), {
          status,
          redirectOrigin,
          ...(headers && { headers }),
        });
        return;
      }
      const personId = result.value;
      // The token's `sub` is the login result's accountId, so that is the personId, not the login account id.
      await provider.interactionFinished(
        req,
        res,
        { login: { accountId: personId } },
        { mergeWithLastSubmission: false },
      );
    }),
  );

  router.post(
    '/interaction/:uid/confirm',
    form,
    handle(async (req, res) => {
      const { details, clientId, tenantId } = await current(req, res);
      const personId = details.session?.accountId;
      if (details.prompt.name !== 'consent' || !personId) throw new errors.SessionNotFound('not at the consent step');
      if (req.body?.decision !== 'allow') {
        await provider.interactionFinished(
          req,
          res,
          { error: 'access_denied', error_description: 'the person declined the request' },
          { mergeWithLastSubmission: false },
        );
        return;
      }
      const scopes = await consentCapabilities(details, clientId);
      const account = await loginAccountOf(knex, personId, tenantId);
      if (scopes.length === 0 || !account) {
        await provider.interactionFinished(
          req,
          res,
          {
            error: scopes.length === 0 ? 'invalid_scope' : 'access_denied',
            error_description: 'the request can no longer be granted',
          },
          { mergeWithLastSubmission: false },
        );
        return;
      }
      // A fresh Grant per authorization: it is the refresh-token family and, as sessions.id, the token's `sid`.
      const grant = new provider.Grant({ accountId: personId, clientId });
      grant.addResourceScope(API_RESOURCE, scopes.join(' '));
      const grantId = await grant.save();
      await knex('sessions').insert({ id: grantId, account_id: account.id, client_id: clientId });
      await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
    }),
  );

  // Form bodies the parser refuses (too large, too many fields) get a page, never Express's stack-trace page.
  router.use('/interaction', ((_err, _req, res, _next) => {
    sendPage(res, 'Error', errorPage('The form could not be read.'), { status: 400 });
  }) as ErrorRequestHandler);

  return router;
}

function originOf(details: Details): string | undefined {
  const uri = details.params.redirect_uri;
  return typeof uri === 'string' ? URL.parse(uri)?.origin : undefined;
}
