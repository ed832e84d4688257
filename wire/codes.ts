// The contract's error vocabulary (third-party-api-v1 §7), defined once. Every layer answers with these codes only.

/** §7.3: what the PDP may answer when it denies. */
export const DENY_CODES = [
  'client_unknown',
  'client_disabled',
  'actor_unknown',
  'tenant_suspended',
  'client_not_third_party',
  'profile_not_supported',
  'subject_revoked',
  'epoch_changed',
  'capability_not_granted',
  'plan_capability_excluded',
  'capability_not_in_token',
  'capability_unavailable',
  'resource_type_mismatch',
  'tenant_mismatch',
  'no_relationship',
  'forbidden',
] as const;
export type DenyCode = (typeof DENY_CODES)[number];

/** §7.2: every `error` a Problem body may carry. */
const API_ERROR_CODES = [
  'invalid_token',
  ...DENY_CODES,
  'not_found',
  'revision_conflict',
  'already_exists',
  'precondition_required',
  'payload_too_large',
  'quota_exceeded',
  'schema_invalid',
  'rate_limited',
  'authorization_unavailable',
  'token_verification_unavailable',
] as const;
export type ApiErrorCode = (typeof API_ERROR_CODES)[number];

/** §7.1: the token endpoint's closed enum. */
export const TOKEN_ERROR_CODES = [
  'invalid_client',
  'invalid_grant',
  'invalid_scope',
  'unsupported_grant_type',
] as const;
export type TokenErrorCode = (typeof TOKEN_ERROR_CODES)[number];

const DENY_SET: ReadonlySet<string> = new Set(DENY_CODES);
/** A deny code the caller does not recognise is still a denial: `forbidden` (§7.3), never an allow or a 503. */
export const asDenyCode = (code: unknown): DenyCode =>
  typeof code === 'string' && DENY_SET.has(code) ? (code as DenyCode) : 'forbidden';

/** Denials that would reveal whether a person exists are answered as 404 not_found on person resources (§7.3). */
export const FOLDED_ON_PERSON_RESOURCES: ReadonlySet<DenyCode> = new Set(['tenant_mismatch', 'no_relationship']);

export const STATUS_OF: Record<ApiErrorCode, number> = {
  invalid_token: 401,
  ...(Object.fromEntries(DENY_CODES.map((c) => [c, 403])) as Record<DenyCode, 403>),
  not_found: 404,
  revision_conflict: 409,
  already_exists: 409,
  precondition_required: 428,
  payload_too_large: 413,
  quota_exceeded: 422,
  schema_invalid: 422,
  rate_limited: 429,
  authorization_unavailable: 503,
  token_verification_unavailable: 503,
};
