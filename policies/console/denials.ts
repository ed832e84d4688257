// Why the PDP denied, in words: one sentence per deny code (third-party-api-v1 §7.3) and where the admin fixes it.
// The decisions page's table and its filter both read this one table.
import type { DenyCode } from '../../wire/codes.js';
import { appPath, tenantPath, type Choice, type Link } from './pages.js';
import { DENY_CODES } from '../../wire/codes.js';

/** Where a denial is fixed: the app's grant, the app, the subject (person or service account), the settings... */
type FixedAt = 'grant' | 'app' | 'capability' | 'subject' | 'settings' | 'persons' | 'apps' | 'service-account';

export const DENIALS: Record<DenyCode, { sentence: string; fixedAt: FixedAt }> = {
  client_unknown: { sentence: 'The app is not registered in this tenant.', fixedAt: 'apps' },
  client_disabled: { sentence: 'The app is disabled.', fixedAt: 'app' },
  actor_unknown: { sentence: 'The token names no account of this tenant that may act.', fixedAt: 'subject' },
  tenant_suspended: { sentence: 'The tenant is suspended.', fixedAt: 'settings' },
  client_not_third_party: { sentence: 'Only third-party apps may call this API.', fixedAt: 'app' },
  profile_not_supported: { sentence: 'The token is of a kind this API does not take.', fixedAt: 'app' },
  subject_revoked: {
    sentence: "The person's or service account's access was ended (login disabled, sessions or relationship ended).",
    fixedAt: 'subject',
  },
  epoch_changed: {
    sentence: "The service account's epoch was advanced after this token was issued: a new token works.",
    fixedAt: 'service-account',
  },
  capability_not_granted: { sentence: 'The tenant does not grant the app this capability.', fixedAt: 'grant' },
  plan_capability_excluded: { sentence: "The tenant's plan does not include this capability.", fixedAt: 'settings' },
  capability_not_in_token: {
    sentence: 'The app did not ask for this capability when it got the token.',
    fixedAt: 'app',
  },
  capability_unavailable: { sentence: 'The capability is closed on this deployment.', fixedAt: 'capability' },
  resource_type_mismatch: { sentence: 'The capability does not cover what the app asked for.', fixedAt: 'capability' },
  tenant_mismatch: { sentence: 'The person belongs to another tenant.', fixedAt: 'persons' },
  no_relationship: { sentence: 'The tenant has no relationship with this person.', fixedAt: 'persons' },
  forbidden: { sentence: 'The request names no person the app may reach.', fixedAt: 'app' },
};

const LINK_TEXT: Record<FixedAt, string> = {
  grant: "the app's grant",
  app: 'the app',
  capability: 'the capability',
  subject: 'the person or service account',
  settings: 'the tenant settings',
  persons: 'the persons',
  apps: 'the apps',
  'service-account': 'the service accounts',
};

/** The sentence for `code` (a code outside the table is shown as it is). */
export const denialSentence = (code: string) => DENIALS[code as DenyCode]?.sentence ?? code;

/** Where the denial of `d` is fixed, as a link. */
export function denialFix(
  tenantId: string,
  d: { code: string | null; clientId: string; subject: string; capability: string },
): Link | undefined {
  const at = DENIALS[d.code as DenyCode]?.fixedAt;
  if (!at) return undefined;
  const href = {
    grant: `${appPath(tenantId, d.clientId)}#grant-h`,
    app: appPath(tenantId, d.clientId),
    capability: `${appPath(tenantId, d.clientId)}#capability-${d.capability}`,
    subject: d.subject.startsWith('psn_')
      ? tenantPath(tenantId, `persons/${encodeURIComponent(d.subject)}`)
      : tenantPath(tenantId, 'service-accounts'),
    settings: tenantPath(tenantId, 'settings'),
    persons: tenantPath(tenantId, 'persons'),
    apps: tenantPath(tenantId, 'apps'),
    'service-account': tenantPath(tenantId, 'service-accounts'),
  }[at];
  return { href, label: LINK_TEXT[at] };
}

/** Each deny code as a filter choice, in the table's words. */
export const DENIAL_CHOICES: readonly Choice[] = DENY_CODES.map((code) => ({
  value: code,
  words: DENIALS[code].sentence,
}));
