// DPoP (RFC 9449) from the app's side, by hand: a key pair and proofs made with jose, each field changeable, for the
// tests that prove what the gateway refuses; and an API call that presents a token with the DPoP scheme.
import { randomUUID } from 'node:crypto';
import { SignJWT, calculateJwkThumbprint, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import { accessTokenHash } from '../../gateway/plugins/dpop/proof.js';
import { callApi, type CheckedResponse } from './api.js';

export interface DpopKey {
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  publicJwk: JWK;
  jkt: string;
  alg: string;
}

export async function dpopKey(alg = 'ES256'): Promise<DpopKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  return { privateKey, publicKey, publicJwk, jkt: await calculateJwkThumbprint(publicJwk, 'sha256'), alg };
}

export interface ProofFields {
  htm: string;
  htu: string;
  /** The access token whose hash goes in ath; undefined leaves ath out. */
  token: string | undefined;
  iat?: number;
  jti?: string;
  typ?: string;
  /** The header's jwk (default: the key's public JWK). */
  jwk?: JWK;
}

/** A proof signed with `key`, by default a valid one for the request `fields` names. */
export function makeProof(key: DpopKey, fields: ProofFields): Promise<string> {
  const claims: Record<string, unknown> = { htm: fields.htm, htu: fields.htu, jti: fields.jti ?? randomUUID() };
  if (fields.token !== undefined) claims.ath = accessTokenHash(fields.token);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: key.alg, typ: fields.typ ?? 'dpop+jwt', jwk: fields.jwk ?? key.publicJwk })
    .setIssuedAt(fields.iat ?? Math.floor(Date.now() / 1000))
    .sign(key.privateKey);
}

/** A call through the gateway with `Authorization: DPoP <token>` and the given DPoP header (held to the document). */
export function dpopCall(
  baseUrl: string,
  operationId: string,
  path: string,
  token: string,
  proof: string | undefined,
  init: { method?: string; scheme?: string } = {},
): Promise<CheckedResponse> {
  return callApi(baseUrl, operationId, path, undefined, {
    method: init.method ?? 'GET',
    headers: { authorization: `${init.scheme ?? 'DPoP'} ${token}`, ...(proof !== undefined && { dpop: proof }) },
  });
}

/** The parameters of the DPoP challenge in a WWW-Authenticate header (error, algs, ...). */
export function dpopChallenge(header: string | null): Record<string, string> | undefined {
  const at = header?.indexOf('DPoP ') ?? -1;
  if (!header || at < 0) return undefined;
  return Object.fromEntries([...header.slice(at + 5).matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
}
