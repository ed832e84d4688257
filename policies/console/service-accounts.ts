// The console's service-account page: status and epoch of each app's workload account.
import type { Request, Router } from 'express';
import * as pages from './pages.js';
import { tenantPath } from './pages.js';
import { apiPath, locals, type ConsoleKit } from './kit.js';
import { advanceEpoch, listServiceAccounts, setAccountStatus } from '../admin/accounts.js';

export function serviceAccountRoutes(tenant: Router, kit: ConsoleKit): void {
  const { db, send, frameOf, confirmThenPerform, changeStatus } = kit;
  tenant.get('/service-accounts', async (_req, res) => {
    const { session, tenant: current } = locals(res);
    send(
      res,
      pages.serviceAccountsPage(
        { ...frameOf(res, 'Service accounts'), session, tenant: current },
        await listServiceAccounts(db, current.tenantId),
      ),
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
          `Advance the epoch of ${accountId}? Every token it holds now is refused from its next request ` +
          '(403 epoch_changed); new tokens work.',
        back: tenantPath(tenantId, 'service-accounts'),
        said: (advanced) =>
          `The epoch of ${advanced.accountId} is now ${advanced.epoch}; its older tokens are refused.`,
      },
    );
  });

  tenant.post('/service-accounts/:accountId/status', async (req: Request<{ accountId: string }>, res) => {
    const { tenantId } = locals(res).tenant;
    const { accountId } = req.params;
    await changeStatus(req, res, apiPath('accounts', accountId), (body) => setAccountStatus(db, accountId, body), {
      consequence:
        `Disable ${accountId}? Its tokens are refused from their next request (403 subject_revoked) ` +
        'until it is enabled again.',
      back: tenantPath(tenantId, 'service-accounts'),
      said: (account) => `${account.accountId} is now ${account.status}.`,
    });
  });
}
