// An app's sender-constraint and client-authentication settings (issue 49), optional on registration: how a
// confidential app authenticates at the token endpoint, the public keys it signs its client assertions with, whether
// its tokens must be DPoP-bound and its authorization requests pushed, and the FAPI 2.0 profile that implies them.
// Left out, every setting keeps today's behaviour. One rule for the admin API and the console.
import { createPublicKey } from 'node:crypto';
import { z } from 'zod';
import { SECURITY_PROFILES, TOKEN_ENDPOINT_AUTH_METHODS } from '../../wire/sender-constraint.js';
import { issueInWords } from './support.js';

/** Members that only a private (or symmetric) JWK has: a registered key set holds public keys only. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;
const MAX_KEYS = 10;

/** A key's name in a refusal: its kid when it has a short one, else its place in the set. */
const keyName = (key: Record<string, unknown>, i: number) =>
  typeof key.kid === 'string' && key.kid.length <= 64 ? `key "${key.kid}"` : `key ${i}`;

/** Why `key` may not be registered, in words; undefined when it is a usable public EC or RSA key. */
function keyProblem(key: Record<string, unknown>): string | undefined {
  const secret = PRIVATE_MEMBERS.filter((m) => m in key);
  if (secret.length)
    return `holds private member${secret.length > 1 ? 's' : ''} ${secret.join(', ')}: register the public key only`;
  if (key.kty !== 'EC' && key.kty !== 'RSA') return 'must be an EC or RSA public key (kty EC or RSA)';
  try {
    createPublicKey({ key: key as import('node:crypto').JsonWebKey, format: 'jwk' });
  } catch {
    return `is not a valid ${key.kty} public key`;
  }
  return undefined;
}

/** A JWKS of 1 to 10 public EC or RSA keys; a refusal names every refused key and why. */
export const PUBLIC_JWKS = z
  .strictObject({ keys: z.array(z.record(z.string(), z.unknown())).min(1).max(MAX_KEYS) })
  .superRefine(({ keys }, ctx) => {
    keys.forEach((key, i) => {
      const problem = keyProblem(key);
      if (problem) ctx.addIssue(issueInWords(`jwks: ${keyName(key, i)} ${problem}`));
    });
  });

export const SECURITY_FIELDS = {
  tokenEndpointAuthMethod: z.enum(TOKEN_ENDPOINT_AUTH_METHODS).optional(),
  jwks: PUBLIC_JWKS.optional(),
  dpopBoundAccessTokens: z.boolean().optional(),
  requirePushedAuthorizationRequests: z.boolean().optional(),
  securityProfile: z.enum(SECURITY_PROFILES).optional(),
};

interface SecurityInput {
  type: 'confidential' | 'public';
  redirectUris: string[];
  tokenEndpointAuthMethod?: (typeof TOKEN_ENDPOINT_AUTH_METHODS)[number] | undefined;
  jwks?: { keys: Record<string, unknown>[] } | undefined;
  dpopBoundAccessTokens?: boolean | undefined;
  requirePushedAuthorizationRequests?: boolean | undefined;
  securityProfile?: 'fapi2' | undefined;
}

/** The settings as stored (clients table columns, migration 014). */
export interface SecurityColumns {
  token_endpoint_auth_method: string | null;
  jwks: string | null;
  dpop_bound_access_tokens: boolean;
  require_pushed_authorization_requests: boolean;
  security_profile: string | null;
}

/**
 * The fields' rules across each other, as zod issues: private_key_jwt and jwks come together, only for confidential
 * apps; fapi2 is for confidential apps with https redirect URIs, and implies private_key_jwt, DPoP-bound tokens and
 * pushed requests (naming any of them otherwise is a contradiction, refused rather than silently overridden).
 */
export function checkSecurity(b: SecurityInput, ctx: z.RefinementCtx): void {
  const fail = (message: string) => ctx.addIssue(issueInWords(message));
  const fapi = b.securityProfile === 'fapi2';
  if (b.type === 'public') {
    if (b.tokenEndpointAuthMethod)
      fail('tokenEndpointAuthMethod: a public app authenticates with no secret or key (PKCE); leave it out');
    if (fapi) fail('securityProfile: fapi2 is for confidential apps only');
  }
  const keyAuth = b.tokenEndpointAuthMethod === 'private_key_jwt' || (fapi && b.type === 'confidential');
  if (fapi && b.tokenEndpointAuthMethod && b.tokenEndpointAuthMethod !== 'private_key_jwt')
    fail('tokenEndpointAuthMethod: the fapi2 profile requires private_key_jwt');
  if (keyAuth && !b.jwks) fail('jwks: private_key_jwt needs the public keys the app signs its client assertions with');
  if (!keyAuth && b.jwks) fail('jwks: only an app using private_key_jwt registers keys');
  if (fapi && b.dpopBoundAccessTokens === false)
    fail('dpopBoundAccessTokens: the fapi2 profile requires sender-constrained (DPoP-bound) tokens');
  if (fapi && b.requirePushedAuthorizationRequests === false)
    fail('requirePushedAuthorizationRequests: the fapi2 profile requires pushed authorization requests');
  if (fapi)
    for (const uri of b.redirectUris)
      if (!uri.startsWith('https://')) fail(`${uri}: the fapi2 profile accepts https redirect URIs only`);
}

const SECURITY_SETTINGS = z
  .object({ type: z.enum(['confidential', 'public']), redirectUris: z.array(z.string()), ...SECURITY_FIELDS })
  .superRefine(checkSecurity);

/**
 * Why the admin API would refuse an app's settings, one sentence each (none when it would accept them): the tenant file
 * (infra/tenant-file.ts) lists them before it sends anything.
 */
export function securityProblems(settings: { type: string; redirectUris: string[] } & object): string[] {
  const result = SECURITY_SETTINGS.safeParse(settings);
  if (result.success) return [];
  return result.error.issues.map((i) =>
    (i as { params?: { inWords?: boolean } }).params?.inWords ? i.message : `${i.path.join('.')}: ${i.message}`,
  );
}

/** The columns to store for valid settings (checkSecurity passed); fapi2 stores what it implies. */
export function securityColumns(b: SecurityInput): SecurityColumns {
  const fapi = b.securityProfile === 'fapi2';
  const method = b.type === 'public' ? null : fapi ? 'private_key_jwt' : (b.tokenEndpointAuthMethod ?? null);
  return {
    token_endpoint_auth_method: method,
    jwks: method === 'private_key_jwt' && b.jwks ? JSON.stringify(b.jwks) : null,
    dpop_bound_access_tokens: fapi || (b.dpopBoundAccessTokens ?? false),
    require_pushed_authorization_requests: fapi || (b.requirePushedAuthorizationRequests ?? false),
    security_profile: fapi ? 'fapi2' : null,
  };
}

/** The settings as the client object shows them (admin API, console); jwks only when registered. */
export const securityView = (c: Omit<SecurityColumns, 'jwks'> & { type: string; jwks: unknown }) => ({
  tokenEndpointAuthMethod: c.type === 'public' ? 'none' : (c.token_endpoint_auth_method ?? 'client_secret_basic'),
  ...(c.jwks ? { jwks: c.jwks as { keys: object[] } } : {}),
  dpopBoundAccessTokens: c.dpop_bound_access_tokens,
  requirePushedAuthorizationRequests: c.require_pushed_authorization_requests,
  securityProfile: c.security_profile,
});
