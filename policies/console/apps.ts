// The console's app pages: the tenant's apps, registering one, an app's grants, settings, status and secrets.
import type { Request, Response, Router } from 'express';
import * as pages from './pages.js';
import { appPath, tenantPath } from './pages.js';
import { apiPath, linesOf, list, locals, one, texts, type ConsoleKit } from './kit.js';
import { STATUS_OF } from '../../wire/codes.js';
import { done, refused, refusalStatus, type Outcome } from '../../wire/outcome.js';
import { etagOf } from '../admin/etags.js';
import {
  createClient,
  deleteClient,
  findClient,
  listClients,
  storedRecordsOf,
  updateClient,
  type ClientView,
} from '../admin/clients.js';
import { capabilityCatalogue } from '../admin/capabilities.js';
import { reads } from '../admin/audit.js';
import { grantsOfTenant, putGrant } from '../admin/grants.js';
import { refusalWords } from './refusals.js';
import { createNextSecret, currentSecretEnds, hasPendingSecret, promoteNextSecret } from '../admin/client-secrets.js';
import { html } from './html.js';

const DEFAULT_METHOD = 'client_secret_basic';
const APP_FIELDS = ['name', 'slug', 'kind', 'type', 'redirectUris', 'allowedOrigins'];
/** The register form's security fields, kept as entered when it is refused. */
const SECURITY_FORM_FIELDS = [
  'tokenEndpointAuthMethod',
  'jwks',
  'dpopBoundAccessTokens',
  'requirePushedAuthorizationRequests',
  'securityProfile',
];

/** A JSON textarea: blank is "not given"; text that is no JSON is schema_invalid, as the API answers it. */
function jsonField(v: unknown): Outcome<unknown> {
  const text = one(v)?.trim();
  if (!text) return done(undefined);
  try {
    return done(JSON.parse(text));
  } catch {
    return refused('schema_invalid', 'jwks: not valid JSON (paste the key set, {"keys": [...]}, as it is)');
  }
}

export function appRoutes(tenant: Router, kit: ConsoleKit): void {
  const {
    db,
    send,
    frameOf,
    notFound,
    refusedPage,
    goTo,
    enteredFrom,
    permitted,
    perform,
    confirmThenPerform,
    changeStatus,
  } = kit;
  const appsPage = async (res: Response, entered?: pages.Entered, status = 200) => {
    const { session, tenant: current } = locals(res);
    const [apps, grants] = await reads(
      () => listClients(db, current.tenantId),
      () => grantsOfTenant(db, current.tenantId),
    );
    const listed = apps.map((client) => ({ client, capabilities: grants.get(client.clientId) ?? [] }));
    send(res, pages.appsPage({ ...frameOf(res, 'Apps'), session, tenant: current }, listed, entered), status);
  };
  /** The app's page; `refused` when a form of it comes back (what was entered, and which form changed meanwhile). */
  const appPage = async (
    res: Response,
    client: ClientView,
    { status = 200, ...refused }: pages.RefusedForms & { status?: number } = {},
  ) => {
    const { session, tenant: current } = locals(res);
    const [grants, pending, oldSecretEnds, catalogue, records] = await reads(
      () => grantsOfTenant(db, client.tenantId),
      () => hasPendingSecret(db, client.clientId),
      () => currentSecretEnds(db, client.clientId),
      () => capabilityCatalogue(db, current.plan),
      () => storedRecordsOf(db, client.clientId),
    );
    const granted = grants.get(client.clientId) ?? [];
    const etags = {
      client: etagOf(client),
      grant: etagOf({ tenantId: client.tenantId, clientId: client.clientId, capabilities: granted }),
    };
    send(
      res,
      pages.appPage(
        { ...frameOf(res, `App: ${client.name}`), session, tenant: current },
        client,
        { granted, secretPending: pending, oldSecretEnds, catalogue, records, etags },
        refused,
      ),
      status,
    );
  };
  /** The way back to an app's page from a refusal or a question about it, naming the app. */
  const backTo = (client: ClientView): pages.Link => ({
    href: appPath(client.tenantId, client.clientId),
    label: client.name,
  });
  tenant.get('/apps', async (_req, res) => appsPage(res));

  tenant.post('/apps', async (req, res) => {
    const { tenantId } = locals(res).tenant;
    const type = one(req.body.type);
    const jwks = jsonField(req.body.jwks);
    const body = {
      name: one(req.body.name),
      slug: one(req.body.slug),
      kind: one(req.body.kind),
      type,
      redirectUris: linesOf(req.body.redirectUris),
      allowedOrigins: linesOf(req.body.allowedOrigins),
      // The security settings (issue 49): unticked boxes and the preselected default method send nothing, as the
      // API's defaults (so ticking fapi2 alone implies private_key_jwt there).
      ...(type === 'confidential' &&
        (one(req.body.tokenEndpointAuthMethod) ?? DEFAULT_METHOD) !== DEFAULT_METHOD && {
          tokenEndpointAuthMethod: one(req.body.tokenEndpointAuthMethod),
        }),
      ...(jwks.ok && jwks.value !== undefined && { jwks: jwks.value }),
      ...(one(req.body.dpopBoundAccessTokens) === 'yes' && { dpopBoundAccessTokens: true }),
      ...(one(req.body.requirePushedAuthorizationRequests) === 'yes' && { requirePushedAuthorizationRequests: true }),
      ...(one(req.body.securityProfile) === 'fapi2' && { securityProfile: 'fapi2' }),
    };
    if (!(await permitted(res, { method: 'POST', path: apiPath('tenants', tenantId, 'clients'), body }))) return;
    const created = jwks.ok ? await createClient(db, tenantId, body) : jwks;
    if (!created.ok)
      return appsPage(
        res,
        enteredFrom(req, created, [...APP_FIELDS, ...SECURITY_FORM_FIELDS]),
        STATUS_OF[created.error],
      );
    const { clientSecret, ...client } = created.value;
    // A confidential app's secret is shown once, in the answer to this POST (never stored readable, never cached).
    if (clientSecret)
      return send(res, pages.secretPage(frameOf(res, `New app: ${client.name}`), client, clientSecret), 201);
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
    const body = {
      name: one(req.body.name),
      redirectUris: linesOf(req.body.redirectUris),
      allowedOrigins: linesOf(req.body.allowedOrigins),
    };
    if (!(await permitted(res, { method: 'PATCH', path: apiPath('clients', clientId), body }))) return;
    const updated = await updateClient(db, clientId, body, one(req.body.etag));
    if (updated.ok) return goTo(res, appPath(tenantId, clientId), `Settings of ${updated.value.name} saved.`);
    const client = await findClient(db, tenantId, clientId);
    if (!client) return notFound(res);
    // What was entered stays in the form, which now carries the stored state's ETag: saving again replaces it knowingly.
    await appPage(res, client, {
      entered: enteredFrom(req, updated, ['name', 'redirectUris', 'allowedOrigins']),
      status: refusalStatus(updated),
      changedMeanwhile: updated.error === 'revision_conflict' ? 'settings' : undefined,
    });
  });

  tenant.post('/apps/:clientId/grant', async (req: Request<{ clientId: string }>, res) => {
    const { tenantId, plan } = locals(res).tenant;
    const { clientId } = req.params;
    const body = { capabilities: list(req.body.capabilities) };
    if (!(await permitted(res, { method: 'PUT', path: apiPath('tenants', tenantId, 'grants', clientId), body })))
      return;
    const saved = await putGrant(db, tenantId, clientId, body, one(req.body.etag));
    const [client, catalogue] = await reads(
      () => findClient(db, tenantId, clientId),
      () => capabilityCatalogue(db, plan),
    );
    if (!client) return notFound(res);
    if (saved.ok)
      return goTo(res, appPath(tenantId, clientId), pages.grantSaved(client, saved.value.capabilities, catalogue));
    if (saved.error !== 'revision_conflict') return refusedPage(res, saved, backTo(client));
    // Changed meanwhile: the page again, with what is granted now and the boxes as the admin ticked them, under the
    // stored grant's ETag, so saving again replaces it knowingly.
    await appPage(res, client, {
      entered: { values: {}, problem: refusalWords(saved) },
      ticked: texts(req.body.capabilities),
      changedMeanwhile: 'grant',
      status: refusalStatus(saved),
    });
  });

  /** An app's action, run with the app when it is this tenant's; any other answers the 404 page. */
  const withApp =
    (action: (req: Request<{ clientId: string }>, res: Response, client: ClientView) => Promise<void>) =>
    async (req: Request<{ clientId: string }>, res: Response) => {
      const client = await findClient(db, locals(res).tenant.tenantId, req.params.clientId);
      await (client ? action(req, res, client) : notFound(res));
    };
  /** The app's page answering a Delete refused because the app owns records: the count and Disable in its place. */
  const ownsRecords = (res: Response, client: ClientView) =>
    appPage(res, client, { status: STATUS_OF.already_exists, deleteRefused: true });

  tenant.post(
    '/apps/:clientId/status',
    withApp(async (req, res, client) => {
      const { clientId } = client;
      await changeStatus(req, res, apiPath('clients', clientId), (body) => updateClient(db, clientId, body), {
        consequence: html`Disable ${pages.appName(client)}? Its tokens are refused from their next request, and it
gets no new ones until it is enabled again.`,
        back: backTo(client),
        said: (updated) => `${updated.name} is now ${updated.status}.`,
      });
    }),
  );

  tenant.post(
    '/apps/:clientId/delete',
    withApp(async (req, res, client) => {
      const { tenantId, clientId } = client;
      // The question is asked only of what the current state allows: a record stored since the page was shown
      // answers as a refused Confirm does.
      if (one(req.body.confirmed) !== 'yes' && (await storedRecordsOf(db, clientId)) > 0)
        return ownsRecords(res, client);
      await confirmThenPerform(
        req,
        res,
        { method: 'DELETE', path: apiPath('clients', clientId) },
        () => deleteClient(db, clientId),
        {
          consequence: html`Delete ${pages.appName(client)}? Its tokens are refused from their next request, and
its secrets, grant, consents and service account are gone for good.`,
          back: backTo(client),
          after: tenantPath(tenantId, 'apps'),
          said: () => `${client.name} is deleted.`,
          refused: (refusal) => (refusal.error === 'already_exists' ? ownsRecords(res, client) : undefined),
        },
      );
    }),
  );

  tenant.post(
    '/apps/:clientId/secrets',
    withApp(async (_req, res, client) => {
      const created = await perform(
        res,
        { method: 'POST', path: apiPath('clients', client.clientId, 'secrets') },
        () => createNextSecret(db, client.clientId),
        backTo(client),
      );
      // Shown once, in the answer to the POST itself (never stored readable, never cached).
      if (created)
        send(
          res,
          pages.secretPage(frameOf(res, `New secret for ${client.name}`), client, created.clientSecret, {
            oldSecretEnds: await currentSecretEnds(db, client.clientId),
          }),
          201,
        );
    }),
  );

  tenant.post(
    '/apps/:clientId/secrets/promote',
    withApp(async (req, res, client) => {
      await confirmThenPerform(
        req,
        res,
        { method: 'POST', path: apiPath('clients', client.clientId, 'secrets', 'promote') },
        () => promoteNextSecret(db, client.clientId),
        {
          consequence: html`Promote the next secret of ${pages.appName(client)}? Its current secret stops working
at once: every deployment of the app must already use the next one.`,
          back: backTo(client),
          said: (updated) => `The next secret of ${updated.name} is now its only secret; the old one no longer works.`,
        },
      );
    }),
  );
}
