// The console's tenant settings: name and limits (tenant admins up to the plan's ceiling), plan, status and admin keys
// (the operator).
import type { Request, Response, Router } from 'express';
import * as pages from './pages.js';
import { tenantPath } from './pages.js';
import { apiPath, locals, one, type ConsoleKit } from './kit.js';
import { refusalStatus } from '../../wire/outcome.js';
import { adminKeyPage, createAdminKey, keyWords, liveKeyLabel, revokeAdminKey } from '../admin/admin-keys.js';
import { rateLimitCeiling, updateTenant } from '../admin/tenants.js';
import { DEFAULT_RATE_LIMIT } from '../evaluate.js';
import type { RateLimitPolicy } from '../../wire/decision.js';

const settingsLink = (tenantId: string): pages.Link => ({
  href: tenantPath(tenantId, 'settings'),
  label: "the tenant's settings",
});

export function tenantSettingsRoutes(tenant: Router, kit: ConsoleKit): void {
  const { db, send, frameOf, goTo, enteredFrom, permitted, perform, confirmed, confirmThenPerform } = kit;
  const settingsPage = async (res: Response, entered?: pages.Entered, status = 200, changedMeanwhile = false) => {
    const { session, caller, tenant: current } = locals(res);
    const keys = caller.kind === 'operator' ? await adminKeyPage(db, current.tenantId, { limit: 100 }) : undefined;
    const limits = (current.rateLimit as RateLimitPolicy | undefined) ?? DEFAULT_RATE_LIMIT;
    send(
      res,
      pages.tenantSettingsPage(
        { ...frameOf(res, 'Settings'), session, tenant: current },
        { limits, ceiling: await rateLimitCeiling(db, current.plan) },
        keys?.ok ? keys.value.items : undefined,
        entered,
        changedMeanwhile,
      ),
      status,
    );
  };
  const SETTINGS_FIELDS = [
    'displayName',
    'plan',
    'status',
    'tenantPoints',
    'tenantDurationS',
    'accountPoints',
    'accountDurationS',
  ];

  tenant.get('/settings', async (_req, res) => settingsPage(res));

  tenant.post('/settings', async (req, res) => {
    const { caller, tenant: current } = locals(res);
    const field = (name: string) => one(req.body[name]);
    const count = (name: string) => (field(name)?.trim() ? Number(field(name)) : undefined);
    const window = (layer: string) => ({ points: count(`${layer}Points`), durationS: count(`${layer}DurationS`) });
    const rateLimit = { tenant: window('tenant'), account: window('account') };
    const currentLimits = (current.rateLimit as RateLimitPolicy | undefined) ?? DEFAULT_RATE_LIMIT;
    const body = {
      displayName: field('displayName'),
      // Limits are sent only when changed, so a tenant admin can rename a tenant whose limits the operator raised
      // beyond the plan's ceiling.
      ...((['tenant', 'account'] as const).some(
        (l) => rateLimit[l].points !== currentLimits[l].points || rateLimit[l].durationS !== currentLimits[l].durationS,
      ) && { rateLimit }),
      // Plan and status are the operator's; a tenant admin's form has neither.
      ...(caller.kind === 'operator' && { plan: field('plan'), status: field('status') }),
    };
    const op = { method: 'PATCH', path: apiPath('tenants', current.tenantId), body } as const;
    const sent = Object.fromEntries(
      [...SETTINGS_FIELDS, 'etag'].flatMap((f) => (field(f) === undefined ? [] : [[f, field(f)!]])),
    );
    if (
      body.status === 'suspended' &&
      current.status !== 'suspended' &&
      !(await confirmed(req, res, op, sent, {
        consequence:
          `Suspend ${current.displayName}? Every token of its apps is refused from its next request, and no new ` +
          'ones are issued, until it is active again.',
        back: settingsLink(current.tenantId),
      }))
    )
      return;
    if (!(await permitted(res, op))) return;
    const updated = await updateTenant(db, current.tenantId, body, caller, field('etag'));
    // What was entered stays in the form, which now carries the stored state's ETag: saving again replaces it knowingly.
    if (!updated.ok)
      return settingsPage(
        res,
        enteredFrom(req, updated, SETTINGS_FIELDS),
        refusalStatus(updated),
        updated.error === 'revision_conflict',
      );
    await goTo(res, tenantPath(current.tenantId, 'settings'), `Settings of ${updated.value.displayName} saved.`);
  });

  tenant.post('/admin-keys', async (req, res) => {
    const { tenant: current } = locals(res);
    const label = one(req.body.label)?.trim() || undefined;
    const body = label === undefined ? {} : { label };
    const issued = await perform(
      res,
      { method: 'POST', path: apiPath('tenants', current.tenantId, 'admin-keys'), body },
      () => createAdminKey(db, current.tenantId, body),
      settingsLink(current.tenantId),
    );
    // Shown once, in the answer to the POST itself.
    if (issued) send(res, pages.adminKeyPage({ ...frameOf(res, 'New admin key'), tenant: current }, issued), 201);
  });

  tenant.post('/admin-keys/:keyId/revoke', async (req: Request<{ keyId: string }>, res) => {
    const { tenant: current } = locals(res);
    const { keyId } = req.params;
    const named = keyWords(keyId, await liveKeyLabel(db, current.tenantId, keyId));
    await confirmThenPerform(
      req,
      res,
      { method: 'DELETE', path: apiPath('tenants', current.tenantId, 'admin-keys', keyId) },
      () => revokeAdminKey(db, current.tenantId, keyId),
      {
        consequence:
          `Revoke the admin key ${named}? Calls with it are refused at once and every console session ` +
          'signed in with it ends.',
        back: settingsLink(current.tenantId),
        said: () => `The admin key ${named} is revoked.`,
      },
    );
  });
}
