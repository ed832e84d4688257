// The console's person pages: the tenant's persons (search, create, disable a login) and one person's consents.
import type { Request, Router } from 'express';
import * as pages from './pages.js';
import { tenantPath } from './pages.js';
import { apiPath, locals, one, type ConsoleKit } from './kit.js';
import { STATUS_OF } from '../../wire/codes.js';
import { consentsOf, revokeSessions, setAccountStatus } from '../admin/accounts.js';
import { createPerson, personPage } from '../admin/persons.js';
import { REFUSAL_TEXT } from './kit.js';

export function personRoutes(tenant: Router, kit: ConsoleKit): void {
  const { db, send, frameOf, notFound, refusedPage, goTo, confirmThenPerform, changeStatus } = kit;
  tenant.get('/persons', async (req, res) => {
    const { session, tenant: current } = locals(res);
    const q = one(req.query.q)?.trim() || undefined;
    const listed = await personPage(db, current.tenantId, { q, cursor: one(req.query.cursor), limit: 50 });
    if (!listed.ok) return refusedPage(res, listed);
    send(res, pages.personsPage({ ...frameOf(res, 'Persons'), session, tenant: current }, listed.value, q));
  });

  tenant.post('/persons', async (req, res) => {
    const { session, tenant: current } = locals(res);
    const body = {
      displayName: one(req.body.displayName),
      username: one(req.body.username),
      password: one(req.body.password),
    };
    const created = await createPerson(db, current.tenantId, body);
    if (created.ok)
      return goTo(
        res,
        `${tenantPath(current.tenantId, 'persons')}?q=${encodeURIComponent(body.username ?? '')}`,
        `${created.value.displayName} can now sign in as ${body.username}.`,
      );
    // Refused: the form again with what was typed (never the password) and why, naming the field.
    const listed = await personPage(db, current.tenantId, { limit: 50 });
    const entered = {
      displayName: body.displayName,
      username: body.username,
      problem: `${REFUSAL_TEXT[created.error] ?? 'That could not be done'}: ${created.message ?? created.error}.`,
    };
    send(
      res,
      pages.personsPage(
        { ...frameOf(res, 'Persons'), session, tenant: current },
        listed.ok ? listed.value : { items: [], nextCursor: null },
        undefined,
        entered,
      ),
      STATUS_OF[created.error],
    );
  });

  tenant.get('/persons/:accountId', async (req: Request<{ accountId: string }>, res) => {
    const { session, tenant: current } = locals(res);
    const consents = await consentsOf(db, current.tenantId, req.params.accountId);
    if (!consents) return notFound(res);
    send(
      res,
      pages.personPage({ ...frameOf(res, 'Person'), session, tenant: current }, req.params.accountId, consents),
    );
  });

  tenant.post('/persons/:accountId/sessions/revoke', async (req: Request<{ accountId: string }>, res) => {
    const { tenantId } = locals(res).tenant;
    const { accountId } = req.params;
    await confirmThenPerform(
      req,
      res,
      { method: 'POST', path: apiPath('accounts', accountId, 'sessions', 'revoke') },
      () => revokeSessions(db, accountId),
      {
        consequence:
          `End every session of the login ${accountId}? Every app's tokens for this person are refused ` +
          'from their next request, and each app needs a new consent.',
        back: tenantPath(tenantId, `persons/${encodeURIComponent(accountId)}`),
        said: () => 'Every session of this login is ended.',
      },
    );
  });

  tenant.post('/persons/:accountId/status', async (req: Request<{ accountId: string }>, res) => {
    const { tenantId } = locals(res).tenant;
    const { accountId } = req.params;
    await changeStatus(req, res, apiPath('accounts', accountId), (body) => setAccountStatus(db, accountId, body), {
      consequence:
        `Disable the login ${accountId}? The person can no longer sign in, and their tokens are refused ` +
        'from their next request until it is enabled again.',
      back: tenantPath(tenantId, 'persons'),
      said: (account) => `The login ${account.accountId} is now ${account.status}.`,
    });
  });
}
