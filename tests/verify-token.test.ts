// The gateway's token check against a key-set server that can fail or rotate keys (contract §5.2, §7.2): faults of
// the token are 401 invalid_token; a key set that cannot be had, or a re-fetch that could not run, is 503.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import { listen, type Listening } from '../common/http.js';
import { tokenVerifier } from '../gateway/verify-token.js';

interface Key { kid: string; privateKey: CryptoKey; publicJwk: JWK }
let server: Listening & { server: import('node:http').Server };
let answer: () => { status: number; body: string };

async function newKey(kid: string): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } };
}
const publish = (...keys: Key[]) => {
  answer = () => ({ status: 200, body: JSON.stringify({ keys: keys.map((k) => k.publicJwk) }) });
};

const now = () => Math.floor(Date.now() / 1000);
function sign(key: Key, claims: Record<string, unknown> = {}, header: Record<string, unknown> = {}) {
  return new SignJWT({
    sub: 'psn_x', client_id: 'tp_a_b', tenant_id: 'ten_x', scope: 'svc.profile.self.read', profile: 'self', jti: 'j1',
    iss: server.url, aud: 'svc-api', iat: now(), exp: now() + 900, ...claims,
  }).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: key.kid, ...header }).sign(key.privateKey);
}

let keyA: Key;
beforeAll(async () => {
  server = await listen(0);
  server.server.on('request', (_req, res) => {
    const { status, body } = answer();
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(body);
  });
  keyA = await newKey('a');
});
afterAll(async () => {
  await server.close();
});

describe('token verification', () => {
  it('accepts a well-formed token signed by a published key', async () => {
    publish(keyA);
    const result = await tokenVerifier(server.url)(await sign(keyA));
    expect(result).toMatchObject({ ok: true, claims: { sub: 'psn_x', tenant_id: 'ten_x' } });
  });

  it.each([
    ['an aud array that merely contains svc-api', { aud: ['svc-api', 'other'] }],
    ['an iat in the future', { iat: now() + 3600, exp: now() + 4000 }],
    ['a token older than the 900 s lifetime', { iat: now() - 1000, exp: now() + 3600 }],
    ['an expired token', { iat: now() - 1000, exp: now() - 100 }],
  ])('refuses %s with invalid_token', async (_name, claims) => {
    publish(keyA);
    expect(await tokenVerifier(server.url)(await sign(keyA, claims))).toMatchObject({ ok: false, reason: 'invalid_token' });
  });

  it.each([
    ['answers 502', () => ({ status: 502, body: 'bad gateway' })],
    ['answers 404', () => ({ status: 404, body: '{}' })],
    ['answers something that is not JSON', () => ({ status: 200, body: 'not json' })],
    ['answers JSON that is not a key set', () => ({ status: 200, body: '{"keys": 1}' })],
  ])('answers token_verification_unavailable when the key set server %s', async (_name, broken) => {
    answer = broken;
    const result = await tokenVerifier(server.url)(await sign(keyA));
    expect(result).toMatchObject({ ok: false, reason: 'token_verification_unavailable' });
  });

  it('answers unavailable for a newly published key while refetching is held back, and accepts it after the cooldown', async () => {
    publish(keyA);
    const verify = tokenVerifier(server.url, { cooldownS: 1 });
    expect(await verify(await sign(keyA))).toMatchObject({ ok: true });
    const keyB = await newKey('b');
    publish(keyA, keyB);
    const tokenB = await sign(keyB);
    expect(await verify(tokenB)).toMatchObject({ ok: false, reason: 'token_verification_unavailable', retryAfterS: 1 });
    await new Promise((r) => setTimeout(r, 1100));
    expect(await verify(tokenB)).toMatchObject({ ok: true });
  });

  it('refuses an unknown key id with invalid_token once a refetch has shown it is not published', async () => {
    publish(keyA);
    const verify = tokenVerifier(server.url, { cooldownS: 1 });
    const stranger = await newKey('stranger');
    // First use: nothing fetched yet, so jose fetches and finds no such key.
    expect(await verify(await sign(stranger))).toMatchObject({ ok: false, reason: 'invalid_token' });
  });
});
