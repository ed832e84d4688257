// Hostile tokens at the real gateway (contract §5.2, §7.2): every forgery, wrong kind of token, expired, malformed,
// duplicated or oversized token is 401 invalid_token with `www-authenticate: Bearer error="invalid_token"`, never a
// 503 and never a 500, and nothing is ever fetched from a location the token names. Each forgery starts from a
// token the issuer really issued (the test holds the issuer's key through ISSUER_JWKS), and that token itself is
// accepted, so every 401 below is for the one difference its name says.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { decodeProtectedHeader } from 'jose';
import type { System } from '../../infra/system.js';
import { listen, type Listening } from '../../common/http.js';
import { startTestSystem } from '../support/system.js';
import { adminClient, setupMachineClient } from '../support/admin.js';
import { clientCredentialsToken } from '../support/oauth.js';
import { assertResponseMatches } from '../support/openapi.js';
import {
  hostileTokens,
  issuerSigningKey,
  malformedAuthorizations,
  signRaw,
  type HostileToken,
  type SigningKey,
} from '../support/hostile-tokens.js';

describe('hostile-tokens', () => {
  const SCOPE = 'svc.profile.self.read';
  let system: System;
  let issuerKey: SigningKey;
  let genuine: string;
  let forgeries: HostileToken[];
  let attacker: Listening & { server: import('node:http').Server };
  let attackerHits = 0;

  beforeAll(async () => {
    const { key, jwks } = await issuerSigningKey();
    issuerKey = key;
    system = await startTestSystem({ ISSUER_JWKS: jwks, ISSUER_ENABLE_CLIENT_CREDENTIALS: 'true' });
    attacker = await listen(0);
    attacker.server.on('request', (_req, res) => {
      attackerHits++;
      res.end('{"keys":[]}');
    });
    const app = await setupMachineClient(adminClient(system), { grant: [SCOPE] });
    genuine = await clientCredentialsToken(system.authUrl, app, SCOPE);
    forgeries = await hostileTokens(genuine, issuerKey, attacker.url);
  });
  afterAll(async () => {
    await attacker?.close();
    await system?.close();
  });

  async function getMe(authorization?: string) {
    const res = await fetch(`${system.baseUrl}/me`, { headers: authorization === undefined ? {} : { authorization } });
    const text = await res.text();
    const body = assertResponseMatches('public', 'getMe', {
      status: res.status,
      headers: res.headers,
      body: text,
    }) as Record<string, unknown>;
    return { status: res.status, headers: res.headers, body };
  }

  /** What is wrong with an answer that should be the contract's 401 for a presented token that fails, or undefined. */
  function notInvalidToken(answer: Awaited<ReturnType<typeof getMe>>): string | undefined {
    const got =
      `${answer.status} ${String(answer.body.error)} ` + `www-authenticate=${answer.headers.get('www-authenticate')}`;
    const ok =
      answer.status === 401 &&
      answer.body.error === 'invalid_token' &&
      answer.headers.get('www-authenticate') === 'Bearer error="invalid_token"' &&
      answer.body.requestId === answer.headers.get('x-request-id');
    return ok ? undefined : got;
  }

  /** Sends every Authorization value and lists those not answered with the contract 401 (all of them, not the first). */
  async function wronglyAnswered(cases: [string, string][]) {
    const wrong: string[] = [];
    for (const [name, authorization] of cases) {
      const problem = notInvalidToken(await getMe(authorization));
      if (problem) wrong.push(`${name}: ${problem}`);
    }
    return wrong;
  }

  describe('the token the forgeries start from', () => {
    it('is accepted: a genuine workload token, and the same claims re-signed by the issuer key', async () => {
      expect(decodeProtectedHeader(genuine)).toEqual({ alg: 'ES256', typ: 'at+jwt', kid: issuerKey.kid });
      expect((await getMe(`Bearer ${genuine}`)).status).toBe(200);
      const [h, p] = genuine
        .split('.')
        .slice(0, 2)
        .map((part) => Buffer.from(part, 'base64url').toString());
      expect((await getMe(`Bearer ${await signRaw(h!, p!, issuerKey.privateKey)}`)).status).toBe(200);
    });
  });

  describe('hostile tokens are 401 invalid_token, never 503 or 500', () => {
    it('covers every kind the issue names', () => {
      const names = forgeries.map((f) => f.name).join('\n');
      for (const kind of [
        /alg none/,
        /HS256 keyed with the issuer public key as PEM/,
        /as JWK/,
        /RS256/,
        /PS256/,
        /another key under the issuer kid/,
        /another key under an unknown kid/,
        /jku/,
        /x5u/,
        /jwk/,
        /x5c/,
        /kid "\.\.\//,
        /kid "' OR/,
        /typ JWT/,
        /no typ/,
        /ID token/,
        /expired/,
        /not yet valid/,
        /^no sub$/m,
        /duplicate aud/,
        /duplicate alg in the header/,
        /aud array/,
        /KiB/,
        /two segments/,
      ]) {
        expect(names).toMatch(kind);
      }
    });

    it('answers each forgery with the contract 401', async () => {
      expect(await wronglyAnswered(forgeries.map(({ name, token }) => [name, `Bearer ${token}`]))).toEqual([]);
      expect(attackerHits).toBe(0);
      console.log(`hostile tokens: ${forgeries.length} forgeries, each 401 invalid_token`);
    });

    it('answers an Authorization header without a usable bearer token with the contract 401', async () => {
      expect(await wronglyAnswered(malformedAuthorizations(genuine))).toEqual([]);
    });

    it('challenges a request without credentials with a bare Bearer challenge', async () => {
      const answer = await getMe();
      expect([answer.status, answer.body.error, answer.headers.get('www-authenticate')]).toEqual([
        401,
        'invalid_token',
        'Bearer',
      ]);
    });

    it(
      'answers a token too large for an HTTP header with the ' + 'documented 431 payload_too_large Problem, not a 5xx',
      async () => {
        // Node's parser refuses a header block over 16 KiB before any handler runs (docs/decisions.md, "Answers Node
        // writes itself").
        const res = await fetch(`${system.baseUrl}/me`, {
          headers: { authorization: `Bearer ${genuine}.${'A'.repeat(64 * 1024)}` },
        });
        expect(res.status).toBe(431);
        expect(await res.json()).toEqual({ error: 'payload_too_large', requestId: res.headers.get('x-request-id') });
      },
    );
  });

  describe('claims the contract leaves to the PDP', () => {
    it(
      'a workload token without actor_account_id passes ' +
        'verification and is denied 403 actor_unknown (§7.3), not 401',
      async () => {
        const [h, p] = genuine
          .split('.')
          .slice(0, 2)
          .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()));
        delete p.actor_account_id;
        const answer = await getMe(`Bearer ${await signRaw(h, p, issuerKey.privateKey)}`);
        expect([answer.status, answer.body.error]).toEqual([403, 'actor_unknown']);
      },
    );
  });
});
