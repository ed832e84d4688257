// The gateway's token check against a key-set server the test controls (contract §5.2, §7.2). Keys come only from
// the configured key set; a key id it does not hold is the token's fault (401), never a 503; 503 only when no key set
// can be had at all; the last good set keeps serving while the issuer is briefly down.
import { describe, it, expect, beforeAll, afterAll, beforeEach } from '@jest/globals';
import { SignJWT, exportJWK, exportSPKI, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import { listen, type Listening } from '../../common/http.js';
import { createLogger } from '../../common/log.js';
import { issuerKeySet, type KeySetOptions } from '../../gateway/plugins/verify-token/key-set.js';
import { tokenVerifier } from '../../gateway/plugins/verify-token/verify.js';
import { memoryLedger, redisLedger } from '../../gateway/plugins/dpop/proof-ledger.js';
import { proofChecker } from '../../gateway/plugins/dpop/proof.js';
import { dpopKey, makeProof } from '../support/dpop.js';
import type { RedisClient } from '../../common/rate-limit-store.js';

describe('verify-token', () => {
  interface Key {
    kid: string;
    privateKey: CryptoKey;
    publicKey: CryptoKey;
    publicJwk: JWK;
  }
  type Server = Listening & { server: import('node:http').Server; hits: number };

  let issuer: Server;
  let attacker: Server;
  let answer: () => { status: number; body: string };
  let attackerKeys: () => string;

  async function serve(respond: () => { status: number; body: string }): Promise<Server> {
    const s = (await listen(0)) as Server;
    s.hits = 0;
    s.server.on('request', (_req, res) => {
      s.hits++;
      const { status, body } = respond();
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(body);
    });
    return s;
  }

  async function newKey(kid: string): Promise<Key> {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    return {
      kid,
      privateKey,
      publicKey,
      publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' },
    };
  }
  const publish = (...keys: Key[]) => {
    answer = () => ({ status: 200, body: JSON.stringify({ keys: keys.map((k) => k.publicJwk) }) });
  };
  const issuerDown = () => {
    answer = () => ({ status: 502, body: 'bad gateway' });
  };

  const nowS = () => Math.floor(Date.now() / 1000);
  /**
   * Claims of a token minted a second ago: a verifier's test clock is read when the verifier is built, slightly before
   * the token is signed, and an `iat` one second past that clock (a second boundary in between) would be "in the future".
   */
  const claimsFor = (overrides: Record<string, unknown> = {}) => ({
    sub: 'psn_x',
    client_id: 'tp_a_b',
    tenant_id: 'ten_x',
    scope: 'svc.profile.self.read',
    profile: 'self',
    jti: 'j1',
    iss: issuer.url,
    aud: 'svc-api',
    iat: nowS() - 1,
    exp: nowS() + 899,
    ...overrides,
  });
  function sign(key: Key, claims: Record<string, unknown> = {}, header: Record<string, unknown> = {}) {
    return new SignJWT(claimsFor(claims))
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: key.kid, ...header })
      .sign(key.privateKey);
  }
  const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');

  /** A verifier on the issuer's key set, with a clock the test moves (milliseconds). */
  function verifierWith(opts: Partial<KeySetOptions> = {}) {
    const clock = { now: Date.now() };
    const keyFor = issuerKeySet(
      new URL(`${issuer.url}/.well-known/jwks.json`),
      { cacheMaxAgeS: 600, maxStaleS: 3600, refetchCooldownS: 10, timeoutMs: 2000, now: () => clock.now, ...opts },
      createLogger('test', 'silent'),
    );
    return { verify: tokenVerifier(issuer.url, { keyFor }), clock };
  }

  let keyA: Key;
  beforeAll(async () => {
    issuer = await serve(() => answer());
    attacker = await serve(() => ({ status: 200, body: attackerKeys() }));
    keyA = await newKey('a');
  });
  afterAll(async () => {
    await issuer.close();
    await attacker.close();
  });
  beforeEach(() => {
    issuer.hits = 0;
    attacker.hits = 0;
  });

  describe('token verification', () => {
    it('accepts a well-formed token signed by a published key', async () => {
      publish(keyA);
      const result = await verifierWith().verify(await sign(keyA));
      expect(result).toMatchObject({ ok: true, value: { sub: 'psn_x', tenant_id: 'ten_x' } });
    });

    it.each([
      ['an aud array that merely contains svc-api', { aud: ['svc-api', 'other'] }],
      ['an iat in the future', { iat: nowS() + 3600, exp: nowS() + 4000 }],
      ['a token older than the 900 s lifetime', { iat: nowS() - 1000, exp: nowS() + 3600 }],
      ['an expired token', { iat: nowS() - 1000, exp: nowS() - 100 }],
    ])('refuses %s with invalid_token', async (_name, claims) => {
      publish(keyA);
      expect(await verifierWith().verify(await sign(keyA, claims))).toMatchObject({
        ok: false,
        error: 'invalid_token',
      });
    });

    it("keeps a DPoP-bound token's key thumbprint (cnf.jkt) and refuses a confirmation it cannot check", async () => {
      publish(keyA);
      const jkt = 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs';
      expect(await verifierWith().verify(await sign(keyA, { cnf: { jkt } }))).toMatchObject({
        ok: true,
        value: { cnf: { jkt } },
      });
      const mtls = await sign(keyA, { cnf: { 'x5t#S256': jkt } });
      expect(await verifierWith().verify(mtls)).toMatchObject({ ok: false, error: 'invalid_token' });
    });

    it.each([
      ['answers 502', () => ({ status: 502, body: 'bad gateway' })],
      ['answers 404', () => ({ status: 404, body: '{}' })],
      ['answers something that is not JSON', () => ({ status: 200, body: 'not json' })],
      ['answers JSON that is not a key set', () => ({ status: 200, body: '{"keys": 1}' })],
    ])(
      'answers token_verification_unavailable with a retry-after when the key set server %s and no set was ever had',
      async (_name, broken) => {
        answer = broken;
        const result = await verifierWith().verify(await sign(keyA));
        expect(result).toMatchObject({ ok: false, error: 'token_verification_unavailable' });
        expect((result as { retryAfterS: number }).retryAfterS).toBeGreaterThanOrEqual(1);
      },
    );
  });

  describe('forged tokens are 401, never 503, and never make the gateway fetch keys from elsewhere', () => {
    const forgeries: [string, () => Promise<string>][] = [
      ['alg none', async () => `${b64({ alg: 'none', typ: 'at+jwt', kid: 'a' })}.${b64(claimsFor())}.`],
      [
        'HS256 keyed with the issuer public key',
        async () =>
          new SignJWT(claimsFor())
            .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid: 'a' })
            .sign(new TextEncoder().encode(await exportSPKI(keyA.publicKey))),
      ],
      ['another key under the issuer kid', async () => sign(await newKey('a'))],
      ['an unpublished kid', async () => sign(await newKey('unpublished'))],
      [
        'an embedded jwk',
        async () => {
          const evil = await newKey('a');
          return sign(
            evil,
            {},
            { jwk: { kty: evil.publicJwk.kty, crv: evil.publicJwk.crv, x: evil.publicJwk.x, y: evil.publicJwk.y } },
          );
        },
      ],
      [
        'a jku naming a server the attacker runs',
        async () => sign(await attackerKey('evil-jku'), {}, { jku: `${attacker.url}/jwks.json` }),
      ],
      [
        'an x5u naming a server the attacker runs',
        async () => sign(await attackerKey('evil-x5u'), {}, { x5u: `${attacker.url}/cert.pem` }),
      ],
      [
        'an iss naming a server the attacker runs',
        async () => sign(await attackerKey('evil-iss'), { iss: attacker.url }),
      ],
    ];
    /** A key the attacker's server publishes as a key set. */
    async function attackerKey(kid: string) {
      const key = await newKey(kid);
      attackerKeys = () => JSON.stringify({ keys: [key.publicJwk] });
      return key;
    }

    it.each(forgeries)('%s', async (_name, forge) => {
      publish(keyA);
      const { verify } = verifierWith();
      expect(await verify(await sign(keyA))).toMatchObject({ ok: true }); // the key set is held
      const token = await forge();
      expect(await verify(token)).toMatchObject({ ok: false, error: 'invalid_token' });
      expect(attacker.hits).toBe(0);
    });
  });

  describe('the key set cache', () => {
    it(
      'refuses an unknown kid with invalid_token while a re-fetch is held back, ' +
        'and accepts a newly published key once one may run',
      async () => {
        publish(keyA);
        const { verify, clock } = verifierWith({ refetchCooldownS: 10 });
        expect(await verify(await sign(keyA))).toMatchObject({ ok: true });
        const keyB = await newKey('b');
        publish(keyA, keyB);
        const tokenB = await sign(keyB);
        // within the cooldown of the first fetch
        expect(await verify(tokenB)).toMatchObject({ ok: false, error: 'invalid_token' });
        expect(issuer.hits).toBe(1);
        clock.now += 10_000;
        expect(await verify(tokenB)).toMatchObject({ ok: true });
        expect(issuer.hits).toBe(2);
      },
    );

    it('answers a flood of unknown kids with 401 and at most one re-fetch', async () => {
      publish(keyA);
      const { verify, clock } = verifierWith({ refetchCooldownS: 10 });
      expect(await verify(await sign(keyA))).toMatchObject({ ok: true });
      clock.now += 10_000; // a re-fetch is allowed again
      const strangers = await Promise.all(
        Array.from({ length: 25 }, (_, i) => newKey(`stranger-${i}`).then((k) => sign(k))),
      );
      const results = await Promise.all(strangers.map((t) => verify(t)));
      expect(results.every((r) => !r.ok && r.error === 'invalid_token')).toBe(true);
      expect(issuer.hits).toBe(2); // the first fetch and one shared re-fetch
    });

    it(
      'keeps verifying with the last good key set while the issuer is down, ' +
        'up to maxStaleS, then answers 503; an unknown kid it cannot re-fetch is 503',
      async () => {
        publish(keyA);
        const { verify, clock } = verifierWith({ cacheMaxAgeS: 60, maxStaleS: 600, refetchCooldownS: 10 });
        const token = await sign(keyA);
        expect(await verify(token)).toMatchObject({ ok: true });
        issuerDown();
        clock.now += 120_000; // past cacheMaxAgeS: a refresh is attempted and fails
        expect(await verify(token)).toMatchObject({ ok: true });
        // The re-fetch for the unknown kid failed: verification cannot finish (§7.2), it is not the token's fault.
        expect(await verify(await sign(await newKey('unknown')))).toMatchObject({
          ok: false,
          error: 'token_verification_unavailable',
        });
        clock.now += 600_000; // past maxStaleS
        expect(await verify(token)).toMatchObject({ ok: false, error: 'token_verification_unavailable' });
      },
    );

    it('takes a refreshed key set once the issuer is back', async () => {
      publish(keyA);
      const { verify, clock } = verifierWith({ cacheMaxAgeS: 60, maxStaleS: 600, refetchCooldownS: 10 });
      expect(await verify(await sign(keyA))).toMatchObject({ ok: true });
      const keyC = await newKey('c');
      publish(keyC); // keyA retired
      clock.now += 120_000;
      // the stale set serves while a refresh starts behind it
      expect(await verify(await sign(keyA))).toMatchObject({ ok: true });
      expect(await verify(await sign(keyC))).toMatchObject({ ok: true }); // the unknown kid waits for that same refresh
      expect(issuer.hits).toBe(2);
    });
  });

  describe('verified tokens remembered by their exact string', () => {
    /** A verifier whose token clock and key-set clock are the same one the test moves. */
    function rememberingVerifier() {
      const clock = { now: Date.now() };
      const keyFor = issuerKeySet(
        new URL(`${issuer.url}/.well-known/jwks.json`),
        { cacheMaxAgeS: 60, maxStaleS: 600, refetchCooldownS: 10, timeoutMs: 2000, now: () => clock.now },
        createLogger('test', 'silent'),
      );
      return { verify: tokenVerifier(issuer.url, { keyFor, now: () => clock.now }), clock };
    }

    it('accepts the same token again until its exp, and refuses it from then on', async () => {
      publish(keyA);
      const { verify, clock } = rememberingVerifier();
      const token = await sign(keyA, { exp: nowS() + 30 });
      expect(await verify(token)).toMatchObject({ ok: true });
      clock.now += 20_000;
      expect(await verify(token)).toMatchObject({ ok: true, value: { sub: 'psn_x' } });
      clock.now += 11_000;
      expect(await verify(token)).toMatchObject({ ok: false, error: 'invalid_token' });
    });

    it('refuses a token it accepted before once its key is retired from a re-fetched key set', async () => {
      publish(keyA);
      const { verify, clock } = rememberingVerifier();
      const tokenA = await sign(keyA);
      expect(await verify(tokenA)).toMatchObject({ ok: true });
      const keyC = await newKey('c');
      publish(keyC); // keyA retired
      clock.now += 61_000; // past cacheMaxAgeS: the next use refreshes the set
      expect(await verify(await sign(keyC))).toMatchObject({ ok: true }); // waits for the refreshed set
      expect(await verify(tokenA)).toMatchObject({ ok: false, error: 'invalid_token' });
    });

    it('answers 503 for a token it accepted before once no key set is usable', async () => {
      publish(keyA);
      const { verify, clock } = rememberingVerifier();
      const token = await sign(keyA, { exp: nowS() + 899 });
      expect(await verify(token)).toMatchObject({ ok: true });
      issuerDown();
      clock.now += 601_000; // past maxStaleS, still before the token's exp
      expect(await verify(token)).toMatchObject({ ok: false, error: 'token_verification_unavailable' });
    });
  });

  describe('the DPoP proof ledger (gateway/plugins/dpop/proof-ledger.ts)', () => {
    it('takes a proof once within its time, and forgets it after', async () => {
      let now = 0;
      const ledger = memoryLedger(10, () => now);
      expect(await ledger.firstUse('k:1', 120)).toBe(true);
      expect(await ledger.firstUse('k:1', 120)).toBe(false);
      now = 119_999;
      expect(await ledger.firstUse('k:1', 120)).toBe(false);
      now = 120_000;
      expect(await ledger.firstUse('k:1', 120)).toBe(true);
    });

    it('holds at most its bound of live proofs, refusing new ones rather than forgetting one', async () => {
      let now = 0;
      const ledger = memoryLedger(3, () => now);
      for (const k of ['a', 'b', 'c']) expect(await ledger.firstUse(k, 120)).toBe(true);
      expect(await ledger.firstUse('d', 120)).toBe(false);
      expect(await ledger.firstUse('a', 120)).toBe(false);
      now = 120_000; // all three expired: room again
      expect(await ledger.firstUse('d', 120)).toBe(true);
    });

    it('answers from the in-process ledger when Redis fails, and says so', async () => {
      const failures: string[] = [];
      const down = { set: async () => Promise.reject(new Error('Connection is closed.')) } as unknown as RedisClient;
      const ledger = redisLedger(down, memoryLedger(10), (err) => failures.push(err.message));
      expect(await ledger.firstUse('k:1', 120)).toBe(true);
      expect(await ledger.firstUse('k:1', 120)).toBe(false);
      expect(failures).toEqual(['Connection is closed.', 'Connection is closed.']);
    });
  });

  describe('the DPoP proof checker with remembered keys (gateway/plugins/dpop/proof.ts)', () => {
    const settings = { algs: ['ES256' as const], iatWindowS: 60, maxProofChars: 4096 };
    const url = 'https://api.example.test/v1/me';
    const token = 'header.claims.signature';
    const request = (proof: string, jkt: string) => ({
      proof,
      method: 'GET',
      url,
      token,
      jkt,
      nowS: Math.floor(Date.now() / 1000),
    });

    it('still checks the signature of every proof whose header it remembers a key for', async () => {
      const check = proofChecker(settings);
      const key = await dpopKey();
      const fields = { htm: 'GET', htu: url, token };
      expect(await check(request(await makeProof(key, fields), key.jkt))).toMatchObject({ ok: true });
      // The same header (the same public JWK) over a proof another key signed: the remembered key must refuse it.
      const other = await dpopKey();
      const forged = await makeProof({ ...other, publicJwk: key.publicJwk }, fields);
      expect(forged.split('.')[0]).toBe((await makeProof(key, fields)).split('.')[0]);
      expect(await check(request(forged, key.jkt))).toEqual({
        ok: false,
        reason: 'proof ERR_JWS_SIGNATURE_VERIFICATION_FAILED',
      });
      // A tampered claim under the remembered header: refused too.
      const [header, , signature] = (await makeProof(key, fields)).split('.');
      const claims = Buffer.from(JSON.stringify({ htm: 'GET', htu: url, jti: 'x', iat: 1, ath: 'y' })).toString(
        'base64url',
      );
      expect(await check(request(`${header}.${claims}.${signature}`, key.jkt))).toMatchObject({ ok: false });
      // The remembered key's thumbprint is still held to the token's cnf.jkt.
      expect(await check(request(await makeProof(key, fields), other.jkt))).toEqual({
        ok: false,
        reason: 'proof key is not the token key',
      });
    });

    it('remembers at most its bound of keys, and a proof of a forgotten key is checked afresh', async () => {
      const check = proofChecker(settings, 2);
      const keys = await Promise.all([dpopKey(), dpopKey(), dpopKey()]);
      const fields = { htm: 'GET', htu: url, token };
      for (const key of [...keys, ...keys])
        expect(await check(request(await makeProof(key, fields), key.jkt))).toMatchObject({ ok: true });
    });
  });
});
