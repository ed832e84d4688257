// oidc-provider configured as the contract's token issuer: plain OAuth 2.0 (no OpenID Connect), authorization code
// with PKCE S256 for every client, strictly rotated refresh tokens, ES256 `at+jwt` access tokens for one API.
// Sender-constrained tokens (issue 49) with oidc-provider's own features: DPoP for any client that sends a proof,
// pushed authorization requests for every client, private_key_jwt for apps that registered public keys, and the FAPI
// 2.0 profile for the apps registered with it. An app that uses none of them gets exactly the tokens it got before.
// Every other feature not named here (development interactions, userinfo, logout) stays off.
import type { Knex } from 'knex';
import Provider, {
  errors,
  interactionPolicy,
  type Configuration,
  type KoaContextWithOIDC,
  type ErrorOut,
} from 'oidc-provider';
import type { Config } from '../common/config.js';
import { accountFinder } from './find-account.js';
import { requestReads } from './request-reads.js';
import { createAdapterFactory, type OnReplay } from './adapter.js';
import { matchesStoredSecret, storedSecretsOf } from './clients.js';
import { trimDiscovery } from './discovery.js';
import { stripUnlistedCors } from './token-endpoint/cors.js';
import { cookieKeysFrom, type SigningKeys } from './keys.js';
import { UNAVAILABLE_RETRY_AFTER_S, errorPage, pageHeaders, pageHtml, unavailablePageBody } from './pages.js';
import { API_AUDIENCE, API_RESOURCE, splitScope } from './scope-policy.js';
import { isClientCredentials, platformClaims, setSubjectClaims } from './token-claims.js';
import { routeOf } from './oidc-route.js';
import { tokenErrorRemapper } from './token-endpoint/errors.js';
import { accessTokenRevocation } from './access-token-revocation.js';
import { CLIENT_ASSERTION_ALGS, DPOP_ALGS } from '../wire/sender-constraint.js';

const HOUR = 60 * 60;
/** oidc-provider's routes by its route names (platform-interfaces.md); discovery's path is fixed by the library. */
export const ROUTES: Readonly<Record<string, string>> = {
  authorization: '/oauth2/authorize',
  token: '/oauth2/token',
  revocation: '/oauth2/revoke',
  pushed_authorization_request: '/oauth2/par',
  jwks: '/.well-known/jwks.json',
  discovery: '/.well-known/openid-configuration',
};
const REFRESH_TOKEN_TTL = 14 * 24 * HOUR;
/** The Grant outlives every refresh token of its family (consent → code exchange takes at most the interaction TTL). */
const GRANT_TTL = REFRESH_TOKEN_TTL + HOUR;

export interface ProviderDeps {
  knex: Knex;
  config: Config;
  keys: SigningKeys;
  onReplay?: OnReplay;
  /** A failure thrown on the token or revocation route after oidc-provider (answered 429 try-later): for the log. */
  onTokenRouteFailure?: (err: unknown) => void;
}

export function createProvider({ knex, config, keys, onReplay, onTokenRouteFailure }: ProviderDeps): Provider {
  const clientCredentials = config.ISSUER_ENABLE_CLIENT_CREDENTIALS;
  const reads = requestReads(knex);

  /** The scopes a request is about: its `scope` parameter, else (token route) those of the code or refresh token. */
  function requestedScopes(ctx: KoaContextWithOIDC): string[] {
    const param = (ctx.oidc.params as { scope?: unknown } | undefined)?.scope;
    if (param !== undefined || routeOf(ctx) !== 'token') return splitScope(param);
    const source = ctx.oidc.entities.AuthorizationCode ?? ctx.oidc.entities.RefreshToken;
    return splitScope(source?.scope);
  }

  /**
   * The capabilities this client may get now; throws invalid_scope when the request asks for none of them (contract
   * §7.1: an empty intersection issues no token). `openid` is refused outright: this issuer is OAuth only and issues
   * no ID tokens, and silently dropping it would leave an OpenID client waiting for one.
   */
  async function grantableScopes(ctx: KoaContextWithOIDC, clientId: string): Promise<string[]> {
    const requested = requestedScopes(ctx);
    if (requested.includes('openid'))
      throw new errors.InvalidScope('openid is not supported: request API capabilities only', 'openid');
    const allowed = isClientCredentials(ctx)
      ? await workloadCapabilities(ctx, clientId)
      : await reads.allowedCapabilities(ctx, clientId);
    if (!requested.some((s) => (allowed as string[]).includes(s)))
      throw new errors.InvalidScope('requested scope is not allowed for this client', requested.join(' '));
    return allowed;
  }

  /**
   * What a workload token may carry: the client's allowance ∩ its service account's capabilities (contract §1 rule 3).
   */
  async function workloadCapabilities(ctx: KoaContextWithOIDC, clientId: string): Promise<string[]> {
    const [account, allowed] = await Promise.all([
      reads.activeServiceAccountOf(ctx, clientId),
      reads.allowedCapabilities(ctx, clientId),
    ]);
    if (!account) throw new errors.InvalidGrant('this client has no active service account');
    return allowed.filter((c) => account.capabilities.includes(c));
  }

  const configuration: Configuration = {
    adapter: createAdapterFactory(knex, { clientCredentials }, onReplay),
    jwks: { keys: keys.keys as NonNullable<Configuration['jwks']>['keys'] },
    cookies: { keys: cookieKeysFrom(keys.keys) },
    routes: {
      authorization: ROUTES.authorization,
      token: ROUTES.token,
      revocation: ROUTES.revocation,
      pushed_authorization_request: ROUTES.pushed_authorization_request,
      jwks: ROUTES.jwks,
    },
    responseTypes: ['code'],
    // No OpenID scopes of our own; the capabilities are resource-server scopes (getResourceServerInfo below).
    scopes: [],
    clientAuthMethods: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
    // Only an EC key exists, so the (unused) ID token algorithm must be ES256 or clients fail to load.
    clientDefaults: { id_token_signed_response_alg: 'ES256' },
    enabledJWA: {
      idTokenSigningAlgValues: ['ES256'],
      clientAuthSigningAlgValues: [...CLIENT_ASSERTION_ALGS],
      dPoPSigningAlgValues: [...DPOP_ALGS],
    },
    // clients.ts carries an app's security profile in its metadata; features.fapi below reads it.
    extraClientMetadata: { properties: ['security_profile'] },
    pkce: { required: () => true },
    // Strict rotation (contract §3). The check first refuses a refresh whose scope is no longer grantable at all,
    // before the refresh token is consumed, so the family is not burnt by a temporary withdrawal.
    rotateRefreshToken: async (ctx) => {
      await grantableScopes(ctx, ctx.oidc.client!.clientId);
      return true;
    },
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    expiresWithSession: async () => false,
    // One token family per authorization: never reuse a grant remembered in the browser session.
    loadExistingGrant: async (ctx) => {
      const grantId = ctx.oidc.result?.consent?.grantId;
      return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
    },
    allowOmittingSingleRegisteredRedirectUri: false,
    features: {
      devInteractions: { enabled: false },
      // RFC 9449 without server nonces (docs/decisions.md "DPoP nonce"): a proof's freshness is its iat and its jti,
      // which oidc-provider checks (ReplayDetection in the adapter); a client that registered
      // dpop_bound_access_tokens gets no token without a proof. A public client's refresh token is bound to the key.
      dPoP: { enabled: true },
      // RFC 9126 for every client; required for the apps registered with requirePushedAuthorizationRequests (or fapi2).
      pushedAuthorizationRequests: { enabled: true, requirePushedAuthorizationRequests: false },
      // The FAPI 2.0 Security Profile, per app: only apps registered with securityProfile fapi2.
      fapi: {
        enabled: true,
        profile: (_ctx, client) => (client?.metadata().security_profile === 'fapi2' ? '2.0' : undefined),
      },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      introspection: { enabled: false },
      // RFC 7009 (platform-interfaces.md "Token revocation"): a client revokes only its own tokens; another client's
      // token is answered 200 with no effect (RFC 7009 §2.2), never an error that would confirm it exists.
      revocation: { enabled: true, allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId },
      clientCredentials: { enabled: clientCredentials },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => API_RESOURCE,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (ctx, indicator, client) => {
          if (indicator !== API_RESOURCE) throw new errors.InvalidTarget();
          const scopes = await grantableScopes(ctx, client.clientId);
          return {
            scope: scopes.join(' '),
            audience: API_AUDIENCE,
            accessTokenFormat: 'jwt',
            accessTokenTTL: config.ACCESS_TOKEN_TTL_S,
            jwt: { sign: { alg: 'ES256', kid: keys.signingKid } },
          };
        },
      },
    },
    extraTokenClaims: platformClaims(reads),
    formats: { customizers: { jwt: setSubjectClaims } },
    findAccount: accountFinder(knex, reads),
    interactions: { url: async (_ctx, interaction) => `/interaction/${interaction.uid}`, policy: signInPolicy() },
    renderError,
    ttl: {
      AccessToken: config.ACCESS_TOKEN_TTL_S,
      ClientCredentials: config.ACCESS_TOKEN_TTL_S,
      AuthorizationCode: 60,
      // A rotated refresh token keeps its predecessor's expiry: the family lives 14 days from the code exchange,
      // with no sliding window (contract §3 "no ... sliding window").
      RefreshToken: (ctx) => ctx?.oidc?.entities.RotatedRefreshToken?.remainingTTL ?? REFRESH_TOKEN_TTL,
      Grant: GRANT_TTL,
      // The browser login is remembered for an hour; consent is asked on every authorization regardless.
      Session: HOUR,
      Interaction: HOUR,
      IdToken: HOUR,
    },
  };

  const provider = new Provider(config.AUTH_URL, configuration);
  provider.use(tokenErrorRemapper(config.AUTH_URL, onTokenRouteFailure));
  // Inside the remapper, so its answer (200) is final before the remapper looks at the status.
  provider.use(accessTokenRevocation(knex, config.AUTH_URL, keys.keys));
  provider.use(trimDiscovery);
  provider.use(stripUnlistedCors);

  // The metadata's client_secret holds the stored forms of the client's usable secrets (clients.ts), read with it.
  provider.Client.prototype.compareClientSecret = function (
    this: { clientId: string; clientSecret?: string },
    presented: string,
  ) {
    return matchesStoredSecret(knex, this.clientId, presented, storedSecretsOf(this.clientSecret));
  };
  return provider;
}

/** JSON everywhere (the token endpoint must never answer HTML); a small page only where a browser is sent. */
async function renderError(ctx: KoaContextWithOIDC, out: ErrorOut): Promise<void> {
  const route = routeOf(ctx);
  if (route !== 'authorization' && route !== 'resume') {
    ctx.type = 'application/json';
    ctx.body = out;
    return;
  }
  ctx.set(pageHeaders());
  // oidc-provider's server_error is a failure of what it stands on (its storage, our hooks' reads): the platform's 503
  // with retry-after, as every service answers a failing dependency, never a 500 that tells the person to start over.
  if (out.error === 'server_error') {
    ctx.status = 503;
    ctx.set('retry-after', String(UNAVAILABLE_RETRY_AFTER_S));
    ctx.body = pageHtml('Try again shortly', unavailablePageBody('Signing in'));
    return;
  }
  ctx.body = pageHtml(
    'Error',
    errorPage('The authorization request could not be completed.', out.error_description ?? out.error),
  );
}

/**
 * oidc-provider's prompts, with one more reason to ask for a sign-in: a browser still signed in (the remembered hour)
 * as a person who may no longer use this client (findAccount refused: another tenant's client, a disabled account, an
 * ended relationship, a revoked session). oidc-provider would go on to consent with no account and no grant (a 500);
 * the person gets the sign-in form instead, or the app `login_required` with prompt=none.
 */
function signInPolicy() {
  const policy = interactionPolicy.base();
  policy
    .get('login')!
    .checks.add(
      new interactionPolicy.Check(
        'account_unavailable',
        'the signed-in person cannot use this client',
        'login_required',
        (ctx) => Boolean(ctx.oidc.session?.accountId) && !ctx.oidc.account,
      ),
    );
  return policy;
}
