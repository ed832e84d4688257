// The PDP's input and output: the seam between the gateway (policy enforcement) and the policies service, with the
// schemas each end reads the other's messages with (the PDP the requests, the gateway the allows). The issuer shares
// the capability vocabulary.
import { z } from 'zod';
import type { DenyCode } from './codes.js';

/** Where the PDP answers decision requests (internal; the gateway is its only caller). */
export const DECISION_PATH = '/internal/v1/decisions';
/** The decisions of concurrent requests in one call: `{items: [DecisionInput]}` → `{items: [Decision]}`, in order. */
export const DECISION_BATCH_PATH = '/internal/v1/decisions/batch';
/**
 * Most decisions one batch call carries; the PDP refuses a larger batch (422 schema_invalid) and the gateway splits.
 */
export const MAX_DECISIONS_PER_CALL = 64;
/** The largest body the PDP reads for one decision (413 payload_too_large above it); a batch call, this per item. */
export const MAX_DECISION_BODY_BYTES = 16 * 1024;

export const CAPABILITIES = [
  'svc.profile.self.read',
  'svc.tenant.info.read',
  'svc.person.read',
  'svc.person.metadata.read',
  'svc.person.metadata.write',
] as const;
export type Capability = (typeof CAPABILITIES)[number];

/**
 * Capabilities over the app's own stored records (contract §3 last row, §8 rule 2). The plan ceiling holds for them
 * like for every capability, except for an app whose extensions hold records in the tenant: it keeps them (when
 * granted) to read, list, delete and export what it stored, and its writes are refused with the write (422
 * quota_exceeded). See docs/decisions.md "Data ownership after a downgrade".
 */
export const RETAINED_DATA_CAPABILITIES: ReadonlySet<Capability> = new Set([
  'svc.person.metadata.read',
  'svc.person.metadata.write',
]);

export const RESOURCE_TYPES = ['self', 'tenant', 'person', 'person_extension'] as const;
export type ResourceType = (typeof RESOURCE_TYPES)[number];
/** Resources that name a person: the PDP checks the relationship, and the gateway folds some denials to 404 (§7.3). */
export const PERSON_RESOURCES: ReadonlySet<ResourceType> = new Set(['person', 'person_extension']);

/**
 * The token profiles v1 serves (§1 rules 1–2). Any other (`delegated`, `shared`) is 403 profile_not_supported, decided
 * from the token alone: by the gateway among its local checks (§1 rule 4a), so it never depends on the PDP being up,
 * and by the PDP as its first check.
 */
export const V1_PROFILES: ReadonlySet<string> = new Set(['self', 'workload']);

/**
 * The access-token claims the decision depends on (platform-interfaces.md "Access token"), as the gateway takes them
 * from a verified token and the PDP from a decision request: one schema for both readers.
 */
export const TokenClaimsSchema = z.object({
  sub: z.string(),
  client_id: z.string(),
  tenant_id: z.string(),
  profile: z.string(),
  scope: z.string(),
  actor_account_id: z.string().optional(),
  actor_epoch: z.number().int().optional(),
  sid: z.string().optional(),
  /**
   * RFC 9449 §6.1: the thumbprint of the key a DPoP-bound token is bound to (issue 49); absent on bearer tokens. Any
   * other confirmation method (mTLS's x5t#S256) is not one this platform can check, so such a token is refused.
   */
  cnf: z.strictObject({ jkt: z.string().regex(/^[A-Za-z0-9_-]{43}$/) }).optional(),
});
export type TokenClaims = z.infer<typeof TokenClaimsSchema>;

export interface DecisionInput {
  requestId: string;
  token: TokenClaims;
  capability: Capability;
  resource: { type: ResourceType; personId?: string | undefined };
}

/**
 * The rate-limit window, one definition wherever a window is stated: a tenant's limits (admin API, console), the PDP's
 * allow, a route's own window in the gateway file, the limiters. Unknown fields are refused everywhere.
 */
export const RateLimitWindowSchema = z.strictObject({
  points: z.number().int().min(1).max(1_000_000).describe('Requests allowed in one window (1 to 1,000,000)'),
  durationS: z.number().int().min(1).max(86_400).describe('The window, in seconds (1 to 86,400)'),
});
export type RateLimitWindow = z.infer<typeof RateLimitWindowSchema>;
/** A tenant's two layers (contract §8 rule 1). */
export const RateLimitPolicySchema = z.strictObject({ tenant: RateLimitWindowSchema, account: RateLimitWindowSchema });
export type RateLimitPolicy = z.infer<typeof RateLimitPolicySchema>;

export interface Allow {
  allow: true;
  /** requested scope ∩ tenant grant ∩ subject authorization ∩ plan ceiling ∩ open capabilities */
  effectiveScopes: Capability[];
  subjectType: 'person' | 'service_account';
  rateLimit: RateLimitPolicy;
}
export interface Deny {
  allow: false;
  code: DenyCode;
  /** Which check produced the denial, for the decision log. */
  check: string;
}
export type Decision = Allow | Deny;

/** A decision request as the PDP reads it (one item of a batch, or the single endpoint's body). */
export const DecisionRequestSchema = z.object({
  requestId: z.string().min(1).max(128),
  token: TokenClaimsSchema,
  capability: z.enum(CAPABILITIES),
  resource: z.object({ type: z.enum(RESOURCE_TYPES), personId: z.string().optional() }),
});

/** An allow as the gateway takes it: only in full, every field the rest of the pipeline relies on well-formed. */
export const AllowSchema = z.object({
  allow: z.literal(true),
  effectiveScopes: z.array(z.enum(CAPABILITIES)),
  subjectType: z.enum(['person', 'service_account']),
  rateLimit: RateLimitPolicySchema,
});
