// The issuer's signing keys (platform-interfaces.md: ISSUER_JWKS / ISSUER_JWKS_FILE, else one generated key kept in
// the database). The first key signs; every key is published (oidc-provider publishes only the public halves).
import { readFile } from 'node:fs/promises';
import { createHmac } from 'node:crypto';
import { exportJWK, generateKeyPair, calculateJwkThumbprint, type JWK } from 'jose';
import type { Knex } from 'knex';
import { ConfigError, type Config } from '../common/config.js';

export interface SigningKeys {
  /** Private EC P-256 JWKs, each with kid, alg ES256 and use sig; [0] signs. */
  keys: JWK[];
  signingKid: string;
}

/** What to run for a key set, named in every refusal of a configured one. */
const MAKE_ONE = 'create one with `npm run admin -- keys generate`';

export async function loadSigningKeys(knex: Knex, config: Config): Promise<SigningKeys> {
  const keys =
    config.ISSUER_JWKS !== undefined
      ? await parseJwks(config.ISSUER_JWKS, 'ISSUER_JWKS')
      : config.ISSUER_JWKS_FILE
        ? await parseJwks(await readKeyFile(config.ISSUER_JWKS_FILE), `ISSUER_JWKS_FILE=${config.ISSUER_JWKS_FILE}`)
        : await storedKeys(knex);
  return { keys, signingKid: keys[0]!.kid! };
}

async function readKeyFile(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new ConfigError(
      `ISSUER_JWKS_FILE=${path}: cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
    );
  }
}

/**
 * Parses a configured JWKS and insists on private P-256 keys, so a misconfiguration stops the start with one line
 * (a ConfigError) naming `source`, the setting it came from.
 */
export async function parseJwks(raw: string, source: string): Promise<JWK[]> {
  const refuse = (why: string) => new ConfigError(`${source}: ${why}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw refuse(`not valid JSON; ${MAKE_ONE}`);
  }
  const list = (parsed as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(list) || list.length === 0)
    throw refuse(`must be a JWKS, {"keys":[...]}, with at least one key; ${MAKE_ONE}`);
  const keys: JWK[] = [];
  for (const [i, k] of list.entries()) {
    const jwk = k as JWK;
    if (jwk?.kty !== 'EC' || jwk.crv !== 'P-256' || !jwk.x || !jwk.y || !jwk.d)
      throw refuse(`keys[${i}] must be a private EC P-256 key (kty EC, crv P-256, x, y, d)`);
    if (jwk.alg !== undefined && jwk.alg !== 'ES256') throw refuse(`keys[${i}].alg must be ES256`);
    if (jwk.use !== undefined && jwk.use !== 'sig') throw refuse(`keys[${i}].use must be sig`);
    keys.push(normalise(jwk, jwk.kid ?? (await calculateJwkThumbprint(jwk))));
  }
  if (new Set(keys.map((k) => k.kid)).size !== keys.length) throw refuse('key ids (kid) must be unique');
  return keys;
}

/** A new private signing key, as the issuer keeps and publishes it (kid = its RFC 7638 thumbprint). */
export async function newSigningKey(): Promise<JWK> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(privateKey);
  return normalise(jwk, await calculateJwkThumbprint(jwk));
}

/**
 * Keys kept in issuer_keys; when there are none, one is generated and inserted. Two issuers starting at once may each
 * insert a key: both are then published and both pick the same (oldest) one to sign, so either's tokens verify.
 */
async function storedKeys(knex: Knex): Promise<JWK[]> {
  const read = async () =>
    (await knex('issuer_keys')
      .select('kid', 'private_jwk')
      .orderBy([{ column: 'created_at' }, { column: 'kid' }])) as {
      kid: string;
      private_jwk: JWK;
    }[];
  let rows = await read();
  if (rows.length === 0) {
    const jwk = await newSigningKey();
    await knex('issuer_keys')
      .insert({ kid: jwk.kid, private_jwk: JSON.stringify(jwk) })
      .onConflict('kid')
      .ignore();
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
  keys.map((k) =>
    createHmac('sha256', Buffer.from(k.d!, 'base64url')).update('issuer cookie keys v1').digest('base64url'),
  );
