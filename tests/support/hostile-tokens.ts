// Hostile access tokens, built from a real one: the test holds the issuer's private key (given to the issuer as
// ISSUER_JWKS), so each forgery differs from a token the gateway accepts in exactly the one way its name says.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPrivateKey, sign as signWith } from 'node:crypto';
import {
  CompactSign,
  decodeJwt,
  decodeProtectedHeader,
  exportJWK,
  exportSPKI,
  generateKeyPair,
  importJWK,
  importPKCS8,
  type CryptoKey,
  type JWK,
} from 'jose';

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

/** A fresh EC P-256 key, and the JWKS string that makes the issuer sign with it (ISSUER_JWKS). */
export async function issuerSigningKey(kid = 'issuer-key-1'): Promise<{ key: SigningKey; jwks: string }> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: 'ES256', use: 'sig' };
  return {
    key: { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid } },
    jwks: JSON.stringify({ keys: [privateJwk] }),
  };
}

const b64url = (text: string | Uint8Array) => Buffer.from(text).toString('base64url');
const json = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

/** A compact JWS over the exact header and payload text given (objects are serialised), signed with ES256 by `key`. */
export async function signRaw(header: object | string, payload: object | string, key: CryptoKey): Promise<string> {
  const input = `${b64url(json(header))}.${b64url(json(payload))}`;
  const pem = createPrivateKey({ key: (await exportJWK(key)) as import('node:crypto').JsonWebKey, format: 'jwk' });
  const signature = signWith('sha256', Buffer.from(input), { key: pem, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}

/** A key of another kind (RSA, EdDSA, other curves) signing with `alg` and the issuer's `kid`. */
async function otherAlgorithm(alg: string, header: Record<string, unknown>, claims: object): Promise<string> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true, ...(alg === 'EdDSA' && { crv: 'Ed25519' }) });
  return new CompactSign(Buffer.from(JSON.stringify(claims))).setProtectedHeader({ ...header, alg }).sign(privateKey);
}

/** A self-signed certificate for an attacker's P-256 key (openssl), for the `x5c` header. */
async function attackerCertificate(): Promise<{ key: CryptoKey; x5c: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'x5c-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-subj',
        '/CN=attacker',
        '-days',
        '1',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    const pem = readFileSync(join(dir, 'cert.pem'), 'utf8');
    const key = await importPKCS8(readFileSync(join(dir, 'key.pem'), 'utf8'), 'ES256', { extractable: true });
    return { key, x5c: pem.replace(/-----[A-Z ]+-----|\s/g, '') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface HostileToken {
  name: string;
  token: string;
}

/**
 * Every forgery the gateway must answer 401 invalid_token (contract §5.2, §7.2), derived from `genuine`, a token
 * the issuer really issued and the gateway accepts. `issuerKey` signs claims and headers the issuer never would;
 * `attackerUrl` is a server the test watches (nothing may fetch from it).
 */
export async function hostileTokens(
  genuine: string,
  issuerKey: SigningKey,
  attackerUrl: string,
): Promise<HostileToken[]> {
  const header = decodeProtectedHeader(genuine) as Record<string, unknown>;
  const claims = decodeJwt(genuine) as Record<string, unknown>;
  const now = Math.floor(Date.now() / 1000);
  const fresh = (c: Record<string, unknown> = {}) => ({
    ...claims,
    jti: `${claims.jti}-${Math.random().toString(36).slice(2)}`,
    iat: now,
    exp: now + 900,
    ...c,
  });
  const withIssuerKey = (h: Record<string, unknown>, c: Record<string, unknown>) =>
    signRaw({ ...header, ...h }, fresh(c), issuerKey.privateKey);
  const without = (name: string) => {
    const c = fresh() as Record<string, unknown>;
    delete c[name];
    return c;
  };
  const attacker = await generateKeyPair('ES256', { extractable: true });
  const attackerJwk = await exportJWK(attacker.publicKey);
  const byAttacker = (h: Record<string, unknown>, c: Record<string, unknown> = {}) =>
    signRaw({ ...header, ...h }, fresh(c), attacker.privateKey);
  const hmac = async (secret: string) =>
    new CompactSign(Buffer.from(JSON.stringify(fresh())))
      .setProtectedHeader({ ...header, alg: 'HS256' })
      .sign(new TextEncoder().encode(secret));
  const pem = await exportSPKI((await importJWK(issuerKey.publicJwk, 'ES256', { extractable: true })) as CryptoKey);
  const cert = await attackerCertificate();
  const [h, p, s] = genuine.split('.') as [string, string, string];
  const claimsText = JSON.stringify(fresh()).slice(1, -1);
  const headerText = JSON.stringify(header).slice(1, -1);

  const cases: [string, string | Promise<string>][] = [
    // algorithms
    [
      'alg none, no signature',
      `${b64url(JSON.stringify({ ...header, alg: 'none' }))}.${b64url(JSON.stringify(fresh()))}.`,
    ],
    ['alg none, the genuine signature kept', `${b64url(JSON.stringify({ ...header, alg: 'none' }))}.${p}.${s}`],
    ['alg NoNe', `${b64url(JSON.stringify({ ...header, alg: 'NoNe' }))}.${b64url(JSON.stringify(fresh()))}.`],
    ['HS256 keyed with the issuer public key as PEM', hmac(pem)],
    ['HS256 keyed with the issuer public key as JWK JSON', hmac(JSON.stringify(issuerKey.publicJwk))],
    ['HS256 keyed with the public key coordinate x', hmac(String(issuerKey.publicJwk.x))],
    ...['RS256', 'PS256', 'RS512', 'PS512', 'ES384', 'ES512', 'EdDSA'].map(
      (alg) => [`${alg} from a key of that kind`, otherAlgorithm(alg, header, fresh())] as [string, Promise<string>],
    ),
    ['ES256 header over an RS256-sized signature', `${h}.${p}.${b64url(Buffer.alloc(256, 7))}`],
    [
      'ES256 signature in DER form',
      `${h}.${p}.${b64url(
        Buffer.concat([
          Buffer.from([0x30, 0x44, 0x02, 0x20]),
          Buffer.from(s, 'base64url').subarray(0, 32),
          Buffer.from([0x02, 0x20]),
          Buffer.from(s, 'base64url').subarray(32),
        ]),
      )}`,
    ],
    [
      'the genuine signature over changed claims',
      `${h}.${b64url(JSON.stringify({ ...claims, scope: `${claims.scope} svc.person.metadata.write` }))}.${s}`,
    ],
    ['an empty signature', `${h}.${p}.`],
    // keys
    ['a valid ES256 signature by another key under the issuer kid', byAttacker({})],
    ['a valid ES256 signature by another key under an unknown kid', byAttacker({ kid: 'attacker-1' })],
    ['a valid ES256 signature by another key with no kid', byAttacker({ kid: undefined })],
    ['an embedded jwk of the signing key', byAttacker({ jwk: attackerJwk })],
    ['a jku naming the attacker', byAttacker({ jku: `${attackerUrl}/jwks.json` })],
    ['an x5u naming the attacker', byAttacker({ x5u: `${attackerUrl}/cert.pem` })],
    ['an x5c certificate of the signing key', signRaw({ ...header, x5c: [cert.x5c] }, fresh(), cert.key)],
    ['an iss naming the attacker', byAttacker({}, { iss: attackerUrl })],
    ['the issuer key with a jku header', withIssuerKey({ jku: `${attackerUrl}/jwks.json` }, {})],
    ['the issuer key with a jwk header', withIssuerKey({ jwk: issuerKey.publicJwk }, {})],
    ['the issuer key with an x5c header', withIssuerKey({ x5c: [cert.x5c] }, {})],
    ['the issuer key with a critical extension', withIssuerKey({ crit: ['exp'] }, {})],
    ['the issuer key with b64 false', withIssuerKey({ b64: false, crit: ['b64'] }, {})],
    // key ids
    ...[
      '../../../etc/passwd',
      '/.well-known/jwks.json',
      `${issuerKey.kid}/../${issuerKey.kid}`,
      "' OR '1'='1",
      `${issuerKey.kid}'; DROP TABLE issuer_keys; --`,
      `${issuerKey.kid}\u0000`,
      '%00',
      'x'.repeat(2000),
      '',
    ].map(
      (kid) =>
        [`the issuer key under kid ${JSON.stringify(kid.slice(0, 40))}`, withIssuerKey({ kid }, {})] as [
          string,
          Promise<string>,
        ],
    ),
    ['the issuer key with a numeric kid', withIssuerKey({ kid: 1 }, {})],
    ['the issuer key with a kid array', withIssuerKey({ kid: [issuerKey.kid] }, {})],
    // typ
    ...[
      ['typ JWT', 'JWT'],
      ['typ jwt', 'jwt'],
      ['typ at+JWT with a space', 'at+jwt '],
      ['typ application/jwt', 'application/jwt'],
      ['no typ', undefined],
      ['typ JOSE', 'JOSE'],
      // jose takes these for at+jwt (media types are case-insensitive, `application/` may be left off); §5.2 says equals
      ['typ application/at+jwt', 'application/at+jwt'],
      ['typ AT+JWT', 'AT+JWT'],
    ].map(([name, typ]) => [name, withIssuerKey({ typ }, {})] as [string, Promise<string>]),
    // ID tokens: what an OpenID issuer would sign with its key
    [
      'an ID token (typ JWT, aud the client, nonce)',
      withIssuerKey(
        { typ: 'JWT' },
        { aud: claims.client_id, nonce: 'n-0S6_WzA2Mj', auth_time: now, azp: claims.client_id, scope: undefined },
      ),
    ],
    [
      'an ID token shape with typ at+jwt and aud the client',
      withIssuerKey({}, { aud: claims.client_id, nonce: 'n-0S6_WzA2Mj' }),
    ],
    // audience and issuer
    ...[
      ['aud array containing svc-api', ['svc-api', 'other']],
      ['aud array of svc-api alone', ['svc-api']],
      ['aud empty array', []],
      ['aud SVC-API', 'SVC-API'],
      ['aud with a trailing space', 'svc-api '],
      ['aud the client id', claims.client_id],
      ['aud null', null],
    ].map(([name, aud]) => [name as string, withIssuerKey({}, { aud })] as [string, Promise<string>]),
    ...[
      ['iss with a trailing slash', `${claims.iss}/`],
      ['iss in upper case', String(claims.iss).toUpperCase()],
      ['iss as an array', [claims.iss]],
      ['iss over https', String(claims.iss).replace('http:', 'https:')],
    ].map(([name, iss]) => [name as string, withIssuerKey({}, { iss })] as [string, Promise<string>]),
    // time (no clock tolerance)
    ['expired one second ago', withIssuerKey({}, { iat: now - 901, exp: now - 1 })],
    ['expired long ago', withIssuerKey({}, { iat: 1_000_000, exp: 1_000_900 })],
    ['not yet valid (nbf in a minute)', withIssuerKey({}, { nbf: now + 60 })],
    ['issued in the future', withIssuerKey({}, { iat: now + 60, exp: now + 960 })],
    ['a lifetime beyond 900 s', withIssuerKey({}, { iat: now - 1000, exp: now + 3600 })],
    ['exp as a string', withIssuerKey({}, { exp: String(now + 900) })],
    ['exp beyond the largest integer', withIssuerKey({}, { exp: 1e300 })],
    ['iat as NaN text', withIssuerKey({}, { iat: 'NaN' })],
    // required claims and their types
    ...['iss', 'aud', 'sub', 'client_id', 'tenant_id', 'scope', 'profile', 'exp', 'iat', 'jti'].map(
      (c) => [`no ${c}`, signRaw(header, without(c), issuerKey.privateKey)] as [string, Promise<string>],
    ),
    ...[
      ['sub as a number', { sub: 7 }],
      ['scope as an array', { scope: String(claims.scope).split(' ') }],
      ['tenant_id as an object', { tenant_id: { id: claims.tenant_id } }],
      ['client_id null', { client_id: null }],
      ['actor_epoch as a string', { actor_epoch: '1' }],
      ['actor_account_id as a number', { actor_account_id: 1 }],
    ].map(
      ([name, c]) => [name as string, withIssuerKey({}, c as Record<string, unknown>)] as [string, Promise<string>],
    ),
    // duplicate members: JSON.parse keeps the last one, so each of these carries an accepted value last
    ['a duplicate alg in the header', signRaw(`{"alg":"none",${headerText}}`, fresh(), issuerKey.privateKey)],
    ['a duplicate kid in the header', signRaw(`{"kid":"attacker",${headerText}}`, fresh(), issuerKey.privateKey)],
    ['a duplicate aud in the claims', signRaw(header, `{"aud":"other",${claimsText}}`, issuerKey.privateKey)],
    [
      'a duplicate sub in the claims',
      signRaw(header, `{"sub":"acc_00000000000000000000000000",${claimsText}}`, issuerKey.privateKey),
    ],
    [
      'a duplicate tenant_id spelled with an escape',
      signRaw(header, `{"tenant\\u005fid":"ten_00000000000000000000000000",${claimsText}}`, issuerKey.privateKey),
    ],
    [
      'a duplicate scope in the claims',
      signRaw(header, `{"scope":"svc.person.metadata.write",${claimsText}}`, issuerKey.privateKey),
    ],
    // size
    ['an 8 KiB claim', withIssuerKey({}, { pad: 'x'.repeat(8 * 1024) })],
    ['a 10 KiB forged token', byAttacker({}, { pad: 'x'.repeat(10 * 1024) })],
    [
      'a 1,000-member header',
      signRaw(
        { ...header, ...Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`h${i}`, 1])) },
        fresh(),
        issuerKey.privateKey,
      ),
    ],
    [
      'a header nested 2,000 levels',
      signRaw(`{${headerText},"deep":${'['.repeat(2000)}${']'.repeat(2000)}}`, fresh(), issuerKey.privateKey),
    ],
    [
      'claims nested 2,000 levels by another key',
      signRaw(header, `{${claimsText},"deep":${'['.repeat(2000)}${']'.repeat(2000)}}`, attacker.privateKey),
    ],
    // malformed compact serialisations
    ...[
      ['two segments', `${h}.${p}`],
      ['four segments', `${h}.${p}.${s}.${s}`],
      ['five segments (a JWE shape)', `${h}.${p}.${s}.${s}.${s}`],
      ['an empty header segment', `.${p}.${s}`],
      ['an empty payload segment', `${h}..${s}`],
      ['only dots', '..'],
      ['base64 padding', `${h}=.${p}.${s}`],
      ['standard base64 characters', `${h}.${p.replace(/-/g, '+').replace(/_/g, '/')}+/.${s}`],
      ['a header that is not JSON', `${b64url('{"alg":"ES256"')}.${p}.${s}`],
      ['a header that is a JSON array', `${b64url('["ES256"]')}.${p}.${s}`],
      ['a header that is null', `${b64url('null')}.${p}.${s}`],
      ['claims that are a JSON string', signRaw(header, '"svc-api"', issuerKey.privateKey)],
      ['claims that are a JSON array', signRaw(header, '[]', issuerKey.privateKey)],
      ['claims that are not JSON', signRaw(header, 'not json', issuerKey.privateKey)],
      [
        'claims with a lone surrogate by another key',
        signRaw(header, `{${claimsText},"x":"\\ud800"}`, attacker.privateKey),
      ],
      ['claims that are invalid UTF-8', `${h}.${b64url(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]))}.${s}`],
      ['a header with a NUL', `${b64url(`{${headerText},"x":"\u0000"}`)}.${p}.${s}`],
      ['the genuine token with a trailing dot', `${genuine}.`],
      ['the genuine token truncated', genuine.slice(0, -5)],
      ['the genuine token reversed', [...genuine].reverse().join('')],
    ].map(([name, t]) => [name as string, t as string | Promise<string>] as [string, string | Promise<string>]),
  ];
  return Promise.all(cases.map(async ([name, token]) => ({ name, token: await token })));
}

/** `Authorization` header values that carry no usable bearer token at all. */
export const malformedAuthorizations = (genuine: string): [string, string][] => [
  ['the scheme alone', 'Bearer'],
  ['the scheme and a space', 'Bearer '],
  ['Basic credentials', `Basic ${b64url('a:b')}`],
  ['the token without a scheme', genuine],
  ['a token with an embedded space', `Bearer ${genuine.slice(0, 20)} ${genuine.slice(20)}`],
  ['two tokens', `Bearer ${genuine}, Bearer ${genuine}`],
  ['a non-ASCII token', `Bearer ${genuine.slice(0, -2)}é`],
  [
    'a 15 KiB token (just under the header limit)',
    `Bearer ${genuine.split('.')[0]}.${'A'.repeat(15 * 1024)}.${genuine.split('.')[2]}`,
  ],
];
