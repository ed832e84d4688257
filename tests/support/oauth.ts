// A third-party app's side of the authorization code flow, with a real OAuth client library (openid-client) and a
// real browser for the person's login and consent.
import * as oidc from 'openid-client';
import type { Browser, Page } from 'playwright-core';
import { keepingPageOnFailure } from './browser.js';
import { assertResponseMatches, captureResponse } from './openapi.js';

export interface AppRegistration {
  authUrl: string;
  clientId: string;
  clientSecret?: string | undefined;
  redirectUri: string;
}

export async function discover(app: AppRegistration): Promise<oidc.Configuration> {
  const auth = app.clientSecret ? oidc.ClientSecretBasic(app.clientSecret) : oidc.None();
  return oidc.discovery(new URL(app.authUrl), app.clientId, undefined, auth, { execute: [oidc.allowInsecureRequests] });
}

export interface AuthorizationRequest {
  url: URL;
  verifier: string;
  state: string;
}

export async function authorizationRequest(
  config: oidc.Configuration,
  redirectUri: string,
  scope: string,
): Promise<AuthorizationRequest> {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope,
    state,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  return { url, verifier, state };
}

/**
 * Opens the authorization URL, signs in and answers the consent page; returns the URL the browser was sent back to
 * (the app's redirect URI with code or error). Nothing needs to listen at the redirect URI.
 */
export async function signInAndConsent(
  browser: Browser,
  authorizationUrl: URL,
  person: { username: string; password: string },
  decision: 'Allow' | 'Deny' = 'Allow',
  inspect?: (consentPage: Page) => Promise<void>,
  // A pushed request's URL names only its request_uri: the app says where it asked to be sent back.
  redirectUri = authorizationUrl.searchParams.get('redirect_uri')!,
): Promise<URL> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    return await keepingPageOnFailure(page, `sign-in-${person.username}`, async () => {
      await page.goto(authorizationUrl.toString());
      await page.locator('input[name="username"]').fill(person.username);
      await page.locator('input[name="password"]').fill(person.password);
      await page.locator('form button, form input[type="submit"]').first().click();
      await page.getByRole('button', { name: decision, exact: true }).waitFor();
      if (inspect) await inspect(page);
      // The issuer redirects to the app; the 'request' event sees redirected requests (page.route does not).
      const sentBack = page.waitForRequest((r) => r.url().startsWith(redirectUri));
      await page.getByRole('button', { name: decision, exact: true }).click();
      const sentTo = new URL((await sentBack).url());
      // The page is kept for the suite's next context (browser.ts) once it shows what the redirect URI answered, or
      // Chromium's error page where nothing listens: that page, committed later, would interrupt the next navigation.
      await page.waitForURL((url) => url.protocol === 'chrome-error:' || url.href.startsWith(redirectUri), {
        waitUntil: 'commit',
      });
      return sentTo;
    });
  } finally {
    await context.close();
  }
}

export interface Tokens {
  access_token: string;
  refresh_token?: string | undefined;
  expires_in?: number | undefined;
  scope?: string | undefined;
  token_type: string;
}

/** The whole flow for tests that need a consented token: authorize, sign in, allow, exchange the code. */
export async function obtainTokens(
  browser: Browser,
  app: AppRegistration,
  person: { username: string; password: string },
  scope: string,
  /** With a key pair, the code is exchanged with a DPoP proof of it: the tokens are bound to it (RFC 9449). */
  dpopKey?: oidc.CryptoKeyPair,
): Promise<Tokens> {
  const config = await discover(app);
  const request = await authorizationRequest(config, app.redirectUri, scope);
  const callback = await signInAndConsent(browser, request.url, person);
  const tokens = await oidc.authorizationCodeGrant(
    config,
    callback,
    { pkceCodeVerifier: request.verifier, expectedState: request.state },
    undefined,
    dpopKey && { DPoP: oidc.getDPoPHandle(config, dpopKey) },
  );
  return tokens as unknown as Tokens;
}

/** A form POSTed to the token endpoint by hand (for what client libraries will not send); held to token-api.yaml. */
export async function postTokenForm(
  authUrl: string,
  form: Record<string, string>,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${authUrl}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form).toString(),
  });
  const body = assertResponseMatches('token', 'issueToken', await captureResponse(res)) as Record<string, unknown>;
  return { status: res.status, headers: res.headers, body };
}

/** HTTP Basic client authentication (RFC 6749 §2.3.1: id and secret form-encoded, then base64). */
export const basicAuth = (clientId: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`;

/** A workload access token by client_credentials with client_secret_basic, sent as a plain form request. */
export async function clientCredentialsToken(
  authUrl: string,
  client: { clientId: string; clientSecret: string },
  scope: string,
): Promise<string> {
  const res = await fetch(`${authUrl}/oauth2/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: basicAuth(client.clientId, client.clientSecret),
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope }).toString(),
  });
  const body = (await res.json()) as { access_token?: string };
  if (res.status !== 200 || !body.access_token)
    throw new Error(`client_credentials: ${res.status} ${JSON.stringify(body)}`);
  return body.access_token;
}
