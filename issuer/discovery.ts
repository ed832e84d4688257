// The discovery document lists what this issuer really offers: plain OAuth 2.0 authorization code + PKCE S256 and
// refresh (client_credentials only when enabled), pushed authorization requests, DPoP and private_key_jwt (issue 49),
// the five capabilities as scopes, and none of oidc-provider's
// OpenID Connect keys (claims, ID token algorithms, subject types, request objects), which do not apply.
import type { KoaContextWithOIDC } from 'oidc-provider';
import { CAPABILITIES } from '../wire/decision.js';
import { routeOf } from './oidc-route.js';

const KEEP = [
  'issuer',
  'authorization_endpoint',
  'token_endpoint',
  'revocation_endpoint',
  'revocation_endpoint_auth_methods_supported',
  'jwks_uri',
  'response_types_supported',
  'response_modes_supported',
  'grant_types_supported',
  'code_challenge_methods_supported',
  'token_endpoint_auth_methods_supported',
  'authorization_response_iss_parameter_supported',
  'token_endpoint_auth_signing_alg_values_supported',
  'pushed_authorization_request_endpoint',
  'require_pushed_authorization_requests',
  'dpop_signing_alg_values_supported',
] as const;

export async function trimDiscovery(ctx: KoaContextWithOIDC, next: () => Promise<unknown>): Promise<void> {
  await next();
  if (routeOf(ctx) !== 'discovery' || ctx.status !== 200 || typeof ctx.body !== 'object' || ctx.body === null) return;
  const full = ctx.body as Record<string, unknown>;
  const trimmed: Record<string, unknown> = {};
  for (const key of KEEP) if (full[key] !== undefined) trimmed[key] = full[key];
  trimmed.scopes_supported = [...CAPABILITIES];
  ctx.body = trimmed;
}
