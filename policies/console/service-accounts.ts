// The console's service-account page: status and epoch of each app's workload account.
import type { Request, Router } from 'express';
import * as pages from './pages.js';
import { tenantPath } from './pages.js';
import { apiPath, locals, type ConsoleKit } from './kit.js';
import { advanceEpoch, listServiceAccounts, setAccountStatus } from '../admin/accounts.js';

export function serviceAccountRoutes(tenant: Router, kit: ConsoleKit): void {
  const { db, send, frameOf, goTo, perform, confirmed } = kit;
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
    if (
      !(await confirmed(
        req,
        res,
        { method: 'POST', path: apiPath('accounts', accountId, 'epoch') },
        {},
        {
          consequence: `Advance the epoch of ${accountId}? Every token it holds now is refused from its next request (403 epoch_changed); new tokens work.`,
          back: tenantPath(tenantId, 'service-accounts'),
        },
      ))
    )
      return;
    const advanced = await perform(res, { method: 'POST', path: apiPath('accounts', accountId, 'epoch') }, () =>
      advanceEpoch(db, accountId),
    );
    if (advanced)
      await goTo(
        res,
        tenantPath(tenantId, 'service-accounts'),
        `The epoch of ${advanced.accountId} is now ${advanced.epoch}; its older tokens are refused.`,
      );
  });

  tenant.post('/service-accounts/:accountId/status', async (req: Request<{ accountId: string }>, res) => {
    const { tenantId } = locals(res).tenant;
    const { accountId } = req.params;
    const body = { status: req.body.status };
    if (
      body.status === 'disabled' &&
      !(await confirmed(
        req,
        res,
        { method: 'PATCH', path: apiPath('accounts', accountId), body },
        { status: 'disabled' },
        {
          consequence: `Disable ${accountId}? Its tokens are refused from their next request (403 subject_revoked) until it is enabled again.`,
          back: tenantPath(tenantId, 'service-accounts'),
        },
      ))
    )
      return;
    const account = await perform(res, { method: 'PATCH', path: apiPath('accounts', accountId), body }, () =>
      setAccountStatus(db, accountId, body),
    );
    if (account)
      await goTo(res, tenantPath(tenantId, 'service-accounts'), `${account.accountId} is now ${account.status}.`);
  });
}
