// The console's service-account page: creating an app's workload account (the app, a name, capabilities offered from
// the app's grant) and the status and epoch of each.
import type { Request, Response, Router } from 'express';
import * as pages from './pages.js';
import { tenantPath } from './pages.js';
import { apiPath, list, locals, one, texts, type ConsoleKit } from './kit.js';
import { STATUS_OF } from '../../wire/codes.js';
import { advanceEpoch, createServiceAccount, listServiceAccounts, updateAccount } from '../admin/accounts.js';
import { reads } from '../admin/audit.js';
import { listClients } from '../admin/clients.js';
import { grantsOfTenant } from '../admin/grants.js';
import { capabilityCatalogue } from '../admin/capabilities.js';

export function serviceAccountRoutes(tenant: Router, kit: ConsoleKit): void {
  const { db, send, frameOf, enteredFrom, permitted, confirmThenPerform, changeStatus, site } = kit;
  const back = (tenantId: string): pages.Link => ({
    href: tenantPath(tenantId, 'service-accounts'),
    label: 'the service accounts',
  });

  /**
   * The page, with the create form for `chosen` (an app picked in its first step), the capabilities `ticked` and a
   * refused form's entries.
   */
  const accountsPage = async (
    res: Response,
    chosen?: string,
    { entered, ticked = [], status = 200 }: { entered?: pages.Entered; ticked?: string[]; status?: number } = {},
  ) => {
    const { session, tenant: current } = locals(res);
    const [accounts, apps, grants, catalogue] = await reads(
      () => listServiceAccounts(db, current.tenantId),
      () => listClients(db, current.tenantId),
      () => grantsOfTenant(db, current.tenantId),
      () => capabilityCatalogue(db, current.plan),
    );
    // client_credentials needs a secret, and an app has at most one service account (its token's subject).
    const taken = new Set(accounts.map((a) => ('clientId' in a ? a.clientId : null)));
    const eligible = apps.filter((a) => a.type === 'confidential' && !taken.has(a.clientId));
    const app = eligible.find((a) => a.clientId === chosen);
    send(
      res,
      pages.serviceAccountsPage({ ...frameOf(res, 'Service accounts'), session, tenant: current }, accounts, {
        eligible,
        chosen: app && {
          app,
          offered: catalogue.filter((cap) => grants.get(app.clientId)?.includes(cap.id)),
          ticked,
        },
        entered,
        clientCredentials: site.clientCredentials,
      }),
      status,
    );
  };

  tenant.get('/service-accounts', async (req, res) => accountsPage(res, one(req.query.clientId)));

  tenant.post('/service-accounts', async (req, res) => {
    const { tenantId } = locals(res).tenant;
    const body = {
      clientId: one(req.body.clientId),
      name: one(req.body.name),
      capabilities: list(req.body.capabilities),
    };
    if (!(await permitted(res, { method: 'POST', path: apiPath('tenants', tenantId, 'service-accounts'), body })))
      return;
    const created = await createServiceAccount(db, tenantId, body);
    if (!created.ok)
      return accountsPage(res, body.clientId, {
        entered: enteredFrom(req, created, ['name']),
        ticked: texts(req.body.capabilities),
        status: STATUS_OF[created.error],
      });
    // The id and the next step, on the answer to the POST itself.
    send(
      res,
      pages.newServiceAccountPage(
        { ...frameOf(res, `New service account: ${created.value.name}`), tenant: locals(res).tenant },
        created.value,
        site,
      ),
      201,
    );
  });

  tenant.post('/service-accounts/:accountId/epoch', async (req: Request<{ accountId: string }>, res) => {
    const { tenantId } = locals(res).tenant;
    const { accountId } = req.params;
    await confirmThenPerform(
      req,
      res,
      { method: 'POST', path: apiPath('accounts', accountId, 'epoch') },
      () => advanceEpoch(db, accountId),
      {
        consequence:
          `Advance the epoch of ${accountId}? Every token it holds now is refused from its next request; ` +
          'new tokens work.',
        back: back(tenantId),
        said: (advanced) =>
          `The epoch of ${advanced.accountId} is now ${advanced.epoch}; its older tokens are refused.`,
      },
    );
  });

  tenant.post('/service-accounts/:accountId/status', async (req: Request<{ accountId: string }>, res) => {
    const { tenantId } = locals(res).tenant;
    const { accountId } = req.params;
    await changeStatus(req, res, apiPath('accounts', accountId), (body) => updateAccount(db, accountId, body), {
      consequence: `Disable ${accountId}? Its tokens are refused from their next request until it is enabled again.`,
      back: back(tenantId),
      said: (account) => `${account.accountId} is now ${account.status}.`,
    });
  });
}
