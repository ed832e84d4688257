// The decision itself: a fixed sequence of checks, each naming the deny code it produces. Pure: facts in, decision out.
import type { DenyCode } from '../wire/codes.js';
import {
  PERSON_RESOURCES,
  RETAINED_DATA_CAPABILITIES,
  V1_PROFILES,
  type Capability,
  type Decision,
  type DecisionInput,
  type RateLimitPolicy,
} from '../wire/decision.js';
import type { CatalogueEntry, DecisionFacts } from './store.js';

/** Defaults for the contract's "numeric rate limit values: not shown"; see docs/decisions.md. */
export const DEFAULT_RATE_LIMIT: RateLimitPolicy = {
  tenant: { points: 3000, durationS: 60 },
  account: { points: 600, durationS: 60 },
};

export function evaluate(input: DecisionInput, f: DecisionFacts): Decision {
  const { token, capability, resource } = input;
  const deny = (code: DenyCode, check: string): Decision => ({ allow: false, code, check });

  if (!V1_PROFILES.has(token.profile)) return deny('profile_not_supported', 'profile');
  const selfProfile = token.profile === 'self';
  if (!token.actor_account_id) return deny('actor_unknown', 'actor.present');
  if (!selfProfile && token.actor_account_id !== token.sub) return deny('actor_unknown', 'actor.workload_is_sub');

  // A client that is not registered in the token's tenant is unknown to it.
  if (!f.client || f.client.tenant_id !== token.tenant_id) return deny('client_unknown', 'client.exists');
  if (f.client.kind !== 'third_party') return deny('client_not_third_party', 'client.kind');
  if (f.client.status !== 'active') return deny('client_disabled', 'client.status');

  if (!f.tenant) return deny('client_unknown', 'tenant.exists');
  if (f.tenant.status !== 'active') return deny('tenant_suspended', 'tenant.status');

  const account = f.account;
  if (!account || account.tenant_id !== token.tenant_id) return deny('actor_unknown', 'actor.exists');
  if (
    selfProfile
      ? account.kind !== 'person' || account.person_id !== token.sub
      : account.kind !== 'service' || account.client_id !== token.client_id
  )
    return deny('actor_unknown', 'actor.matches_subject');
  if (account.status !== 'active') return deny('subject_revoked', 'subject.status');
  if (
    selfProfile &&
    (!f.session || f.session.revoked || f.session.account_id !== account.id || f.session.client_id !== token.client_id)
  )
    return deny('subject_revoked', 'subject.session');
  // A person the tenant no longer has a relationship with has lost access through it, in-flight tokens included.
  if (selfProfile && !f.subjectRelationship) return deny('subject_revoked', 'subject.relationship');
  if (token.actor_epoch !== account.epoch) return deny('epoch_changed', 'subject.epoch');

  const entry = f.catalogue.find((c) => c.id === capability);
  if (!entry || !entry.enabled) return deny('capability_unavailable', 'capability.open');
  const planLevel = f.tenant.plan_level;
  const tokenScopes = new Set(token.scope.split(' ').filter(Boolean));
  // A token carrying a retained-data scope was issued while the plan, or the app's stored records, allowed it; after a
  // downgrade it keeps reading, listing and deleting, and its writes are the backend's 422 quota_exceeded (contract
  // §3's last row; docs/decisions.md "Data ownership after a downgrade"). Issuance keeps the ceiling.
  const withinPlan = (c: CatalogueEntry) =>
    c.min_plan_level <= planLevel || (RETAINED_DATA_CAPABILITIES.has(c.id) && tokenScopes.has(c.id));
  if (!withinPlan(entry)) return deny('plan_capability_excluded', 'capability.plan');
  const granted = new Set(f.granted);
  if (!granted.has(capability)) return deny('capability_not_granted', 'capability.tenant_grant');
  if (!tokenScopes.has(capability)) return deny('capability_not_in_token', 'capability.token_scope');
  const accountCaps = new Set(f.accountCapabilities);
  if (!selfProfile && !accountCaps.has(capability)) return deny('capability_not_granted', 'capability.service_account');

  if (entry.resource_type !== resource.type) return deny('resource_type_mismatch', 'resource.type');
  if (PERSON_RESOURCES.has(resource.type)) {
    // A person resource always names its person; without one the relationship cannot be checked, so no allow.
    if (!resource.personId) return deny('forbidden', 'resource.person_named');
    if (!f.relationship)
      return f.personOfOtherTenant
        ? deny('tenant_mismatch', 'resource.tenant')
        : deny('no_relationship', 'resource.relationship');
  }

  const effectiveScopes = f.catalogue
    .filter((c) => c.enabled && withinPlan(c) && granted.has(c.id) && tokenScopes.has(c.id))
    .filter((c) => selfProfile || accountCaps.has(c.id))
    .map((c) => c.id as Capability)
    .sort();
  return {
    allow: true,
    effectiveScopes,
    subjectType: selfProfile ? 'person' : 'service_account',
    rateLimit: f.tenant.rate_limit ?? DEFAULT_RATE_LIMIT,
  };
}
