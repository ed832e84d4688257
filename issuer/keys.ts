// The issuer's signing keys (platform-interfaces.md: ISSUER_JWKS / ISSUER_JWKS_FILE, else one generated key kept in
// the database). The first key signs; every key is published (oidc-provider publishes only the public halves).
import { readFile } from 'node:fs/promises';
import { createHmac } from 'node:crypto';
import { exportJWK, generateKeyPair, calculateJwkThumbprint, type JWK } from 'jose';
import type { Knex } from 'knex';
import type { Config } from '../common/config.js';

export interface SigningKeys {
  /** Private EC P-256 JWKs, each with kid, alg ES256 and use sig; [0] signs. */
  keys: JWK[];
  signingKid: string;
}

export class KeyConfigError extends Error {}

export async function loadSigningKeys(knex: Knex, config: Config): Promise<SigningKeys> {
  const raw = config.ISSUER_JWKS ?? (config.ISSUER_JWKS_FILE ? await readFile(config.ISSUER_JWKS_FILE, 'utf8') : undefined);
  const keys = raw === undefined ? await storedKeys(knex) : await parseJwks(raw);
  return { keys, signingKid: keys[0]!.kid! };
}

/** Parses a configured JWKS and insists on private P-256 keys, so a misconfiguration stops the start. */
export async function parseJwks(raw: string): Promise<JWK[]> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new KeyConfigError('ISSUER_JWKS is not valid JSON');
  }
  const list = (parsed as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(list) || list.length === 0) throw new KeyConfigError('ISSUER_JWKS must be a JWKS: {"keys":[...]} with at least one key');
  const keys: JWK[] = [];
  for (const [i, k] of list.entries()) {
    const jwk = k as JWK;
    if (jwk?.kty !== 'EC' || jwk.crv !== 'P-256' || !jwk.x || !jwk.y || !jwk.d)
      throw new KeyConfigError(`ISSUER_JWKS keys[${i}] must be a private EC P-256 key (kty EC, crv P-256, x, y, d)`);
    if (jwk.alg !== undefined && jwk.alg !== 'ES256') throw new KeyConfigError(`ISSUER_JWKS keys[${i}].alg must be ES256`);
    if (jwk.use !== undefined && jwk.use !== 'sig') throw new KeyConfigError(`ISSUER_JWKS keys[${i}].use must be sig`);
    keys.push(normalise(jwk, jwk.kid ?? (await calculateJwkThumbprint(jwk))));
  }
  if (new Set(keys.map((k) => k.kid)).size !== keys.length) throw new KeyConfigError('ISSUER_JWKS key ids (kid) must be unique');
  return keys;
}

/**
 * Keys kept in issuer_keys; when there are none, one is generated and inserted. Two issuers starting at once may each
 * insert a key: both are then published and both pick the same (oldest) one to sign, so either's tokens verify.
 */
async function storedKeys(knex: Knex): Promise<JWK[]> {
  const read = async () =>
    (await knex('issuer_keys').select('kid', 'private_jwk').orderBy([{ column: 'created_at' }, { column: 'kid' }])) as {
      kid: string;
      private_jwk: JWK;
    }[];
  let rows = await read();
  if (rows.length === 0) {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const jwk = await exportJWK(privateKey);
    const kid = await calculateJwkThumbprint(jwk);
    await knex('issuer_keys').insert({ kid, private_jwk: JSON.stringify(normalise(jwk, kid)) }).onConflict('kid').ignore();
    rows = await read();
  }
  return rows.map((r) => normalise(r.private_jwk, r.kid));
}

const normalise = (jwk: JWK, kid: string): JWK => ({
  kty: 'EC',
  crv: 'P-256',
  x: jwk.x!,
  y: jwk.y!,
  d: jwk.d!,
  kid,
  alg: 'ES256',
  use: 'sig',
});

/**
 * Cookie signing keys derived from the signing keys (HMAC of the private scalar with a fixed label) rather than
 * generated in memory: interaction cookies then survive a restart and are accepted by every issuer process that
 * shares the key set, and rotating the signing keys rotates these too. The first key signs cookies, all verify.
 */
export const cookieKeysFrom = (keys: JWK[]): string[] =>
  keys.map((k) => createHmac('sha256', Buffer.from(k.d!, 'base64url')).update('issuer cookie keys v1').digest('base64url'));
