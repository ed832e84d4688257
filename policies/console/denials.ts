// Why the PDP denied, in words: one sentence per deny code (third-party-api-v1 §7.3) and where the admin fixes it,
// and each check of policies/evaluate.ts in words. The decisions page's table and its filter both read these tables.
import type { DenyCode } from '../../wire/codes.js';
import { appPath, tenantPath, type Choice, type Link } from './pages.js';
import { DENY_CODES } from '../../wire/codes.js';

/** Where a denial is fixed: the app's grant, the app, the subject (person or service account), the settings... */
type FixedAt = 'grant' | 'app' | 'capability' | 'subject' | 'settings' | 'persons' | 'apps' | 'service-account';

/** `fixedAt` absent: nothing in this tenant's console fixes it. */
export const DENIALS: Record<DenyCode, { sentence: string; fixedAt?: FixedAt }> = {
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
  tenant_mismatch: {
    sentence:
      "The app asked for another tenant's person; it may reach only this tenant's persons, so there is nothing to " +
      'fix here (the app was answered 404).',
  },
  no_relationship: { sentence: 'The tenant has no relationship with this person.', fixedAt: 'persons' },
  forbidden: { sentence: 'The request names no person the app may reach.', fixedAt: 'app' },
};

/** Each check of the PDP's sequence (policies/evaluate.ts), as what it looks at. */
const CHECKS: Record<string, string> = {
  allow: 'all checks passed',
  profile: "the token's kind",
  'actor.present': 'the account the token acts as',
  'actor.workload_is_sub': 'the service account the token acts as',
  'actor.exists': "the acting account is this tenant's",
  'actor.matches_subject': "the acting account is the token's subject",
  'client.exists': 'the app is registered',
  'client.kind': 'the app is a third-party app',
  'client.status': 'the app is enabled',
  'tenant.exists': 'the tenant exists',
  'tenant.status': 'the tenant is active',
  'subject.status': "the person's login or the service account is enabled",
  'subject.session': "the person's session with the app is live",
  'subject.relationship': 'the tenant has a relationship with the person',
  'subject.epoch': "the token's epoch is the service account's",
  'capability.open': 'the capability is open on this deployment',
  'capability.plan': "the tenant's plan includes the capability",
  'capability.tenant_grant': 'the tenant grants the app the capability',
  'capability.token_scope': 'the token carries the capability',
  'capability.service_account': 'the service account holds the capability',
  'resource.type': 'the capability covers what was asked for',
  'resource.person_named': 'the request names a person',
  'resource.tenant': "the person asked for is this tenant's",
  'resource.relationship': 'the tenant has a relationship with the person asked for',
};

/** The check `name` in words (a check outside the table is shown as it is). */
export const checkWords = (name: string) => CHECKS[name] ?? name;

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
