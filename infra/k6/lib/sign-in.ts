// A person signs in as a third-party app's user would: the authorization code flow with PKCE S256 through the
// issuer's own login and consent forms (k6 keeps each VU's cookies), then the code exchange. Redirects are walked
// one by one: the last one goes to the app's redirect URI, where nothing needs to listen.
import http, { type RefinedResponse, type ResponseType } from 'k6/http';
import { randomBytes, sha256 } from 'k6/crypto';
import { b64encode } from 'k6/encoding';
import { AUTH_URL } from './settings.ts';
import { sleep } from 'k6';
import { form, retryAfterOf, tokenRequest, type TokenResponse } from './token-request.ts';
import type { LoadApp, LoadUser } from './users.ts';

type Response = RefinedResponse<ResponseType | undefined>;
const MAX_REDIRECTS = 10;
/**
 * A sign-in form answered 429 (throttled) or 503 (its hashing lane full) is sent again after retry-after, this often.
 */
const MAX_WAITS = 3;

const absolute = (location: string) => (/^https?:\/\//.test(location) ? location : `${AUTH_URL}${location}`);

/** Follows redirects until a page answers, or one points at the app's redirect URI (returned unvisited). */
function walk(res: Response, redirectUri: string): { page: Response } | { sentBack: string } {
  for (let hop = 0; hop < MAX_REDIRECTS; hop++) {
    const location = res.headers.Location;
    if (res.status < 300 || res.status >= 400 || !location) return { page: res };
    if (location.startsWith(redirectUri)) return { sentBack: location };
    res = http.get(absolute(location), { redirects: 0, tags: { endpoint: 'authorize' } });
  }
  throw new Error(`sign-in: more than ${MAX_REDIRECTS} redirects`);
}

/** The value of one query parameter of the URL the issuer sent the app back to. */
function queryParam(url: string, name: string): string | undefined {
  const match = new RegExp(`[?&]${name}=([^&#]*)`).exec(url);
  return match ? decodeURIComponent(match[1]!.replace(/\+/g, ' ')) : undefined;
}

/** Signs `user` in to `app` and returns its first tokens; throws with what the issuer answered when it fails. */
export function signIn(user: LoadUser, app: LoadApp): TokenResponse {
  const verifier = b64encode(randomBytes(32), 'rawurl');
  const state = b64encode(randomBytes(16), 'rawurl');
  const authorize = `${AUTH_URL}/oauth2/authorize?${form({
    response_type: 'code',
    client_id: app.clientId,
    redirect_uri: app.redirectUri,
    scope: app.scope,
    state,
    code_challenge: sha256(verifier, 'base64rawurl'),
    code_challenge_method: 'S256',
  })}`;
  let step = walk(http.get(authorize, { redirects: 0, tags: { endpoint: 'authorize' } }), app.redirectUri);
  // The login form (inputs username and password), unless this VU's session cookie already signed it in.
  for (let wait = 0; 'page' in step && step.page.html().find('input[name="password"]').size() > 0; wait++) {
    const { page } = step;
    if ((page.status === 429 || page.status === 503) && wait <= MAX_WAITS) sleep(retryAfterOf(page.headers));
    else if (wait > 0) break; // refused for good (wrong details): reported below
    const login = page.submitForm({
      fields: { username: user.username, password: user.password },
      params: {
        redirects: 0,
        tags: { endpoint: 'login' },
        responseCallback: http.expectedStatuses({ min: 200, max: 399 }, 429, 503),
      },
    });
    step = walk(login, app.redirectUri);
  }
  // The consent page: its Allow button.
  if ('page' in step && step.page.html().find('button[value="allow"]').size() > 0) {
    const consent = step.page.submitForm({
      submitSelector: 'button[value="allow"]',
      params: { redirects: 0, tags: { endpoint: 'consent' } },
    });
    step = walk(consent, app.redirectUri);
  }
  if ('page' in step)
    throw new Error(`sign-in of ${user.username}: stopped at ${step.page.url} with ${step.page.status}`);
  const code = queryParam(step.sentBack, 'code');
  if (!code || queryParam(step.sentBack, 'state') !== state)
    throw new Error(`sign-in of ${user.username}: sent back without a code (${step.sentBack})`);
  const { status, body } = tokenRequest({
    grant_type: 'authorization_code',
    code,
    redirect_uri: app.redirectUri,
    client_id: app.clientId,
    code_verifier: verifier,
  });
  if (status !== 200) throw new Error(`code exchange for ${user.username}: ${status} ${JSON.stringify(body)}`);
  return body as TokenResponse;
}
