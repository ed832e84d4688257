// The access token each VU calls with, kept as a real client keeps it (contract §5 rule 12): obtained once, reused
// until about 60 seconds remain, then renewed; on a 401, renewed once and the call retried once.
//   default: each VU signs in as a user of the pool (users.ts) and refreshes its own chain with strict rotation, so a
//            run may last longer than a token's 15 minutes and spreads its load over many persons;
//   CLIENT_ID + CLIENT_SECRET: client_credentials (workload tokens; ISSUER_ENABLE_CLIENT_CREDENTIALS=true);
//   ACCESS_TOKEN: one fixed token for the whole run (for example `npm run -s demo-token`; keep such runs short).
import http, { type RefinedParams, type RefinedResponse, type ResponseType } from 'k6/http';
import exec from 'k6/execution';
import { signIn } from './sign-in.ts';
import { tokenRequest, type TokenResponse } from './token-request.ts';
import { APP, userOf } from './users.ts';
import { refreshFailed, refreshes, signInFailed, signIns } from './pool-metrics.ts';

const RENEW_BEFORE_EXPIRY_MS = 60_000;

/** This VU's tokens (module state is per VU in k6). */
let held: { access: string; refresh?: string | undefined; renewAt: number } | undefined;

function hold(tokens: TokenResponse): string {
  held = {
    access: tokens.access_token,
    refresh: tokens.refresh_token,
    renewAt: Date.now() + tokens.expires_in * 1000 - RENEW_BEFORE_EXPIRY_MS,
  };
  return tokens.access_token;
}

function clientCredentials(): TokenResponse {
  const { status, body } = tokenRequest({
    grant_type: 'client_credentials',
    client_id: __ENV.CLIENT_ID!,
    client_secret: __ENV.CLIENT_SECRET!,
    ...(__ENV.SCOPE && { scope: __ENV.SCOPE }),
  });
  if (status !== 200) throw new Error(`client_credentials -> ${status} ${JSON.stringify(body)}`);
  return body as TokenResponse;
}

/** The refresh grant with this VU's refresh token; undefined when it was refused (the VU signs in again). */
function refresh(refreshToken: string): TokenResponse | undefined {
  const { status, body } = tokenRequest({
    grant_type: 'refresh_token',
    client_id: APP.clientId,
    refresh_token: refreshToken,
  });
  if (status === 200) {
    refreshes.add(1);
    return body as TokenResponse;
  }
  refreshFailed.add(1);
  return undefined;
}

function signInThisVu(): TokenResponse {
  try {
    const tokens = signIn(userOf(exec.vu.idInTest), APP);
    signIns.add(1);
    return tokens;
  } catch (err) {
    signInFailed.add(1);
    throw err;
  }
}

/** A fresh token for this VU, however the run gets its tokens. */
function renew(): string {
  if (__ENV.ACCESS_TOKEN) return __ENV.ACCESS_TOKEN;
  if (__ENV.CLIENT_ID && __ENV.CLIENT_SECRET) return hold(clientCredentials());
  const renewed = held?.refresh ? refresh(held.refresh) : undefined;
  return hold(renewed ?? signInThisVu());
}

/** The token to call with now. */
export function accessToken(): string {
  if (__ENV.ACCESS_TOKEN) return __ENV.ACCESS_TOKEN;
  return held && Date.now() < held.renewAt ? held.access : renew();
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** One API call with this VU's token; a 401 gets one renewed token and one retry, as the contract advises clients. */
export function apiCall<RT extends ResponseType | undefined>(
  method: string,
  url: string,
  body: string | null,
  params: RefinedParams<RT> & { headers?: Record<string, string> },
): RefinedResponse<RT> {
  const send = (token: string) =>
    http.request(method, url, body, { ...params, headers: { ...params.headers, ...bearer(token) } });
  const res = send(accessToken());
  return res.status === 401 && !__ENV.ACCESS_TOKEN ? send(renew()) : res;
}
