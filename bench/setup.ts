// `npm run bench`: the data a shape is measured with, made the way users make it: a tenant and an app through the
// admin API, consented tokens through the browser flow (one per connection, so each has its own refresh chain),
// persons, an extension, and one record per connection written through the gateway; and a confidential machine app
// with its service account (client_credentials) and consented tokens of its own (a confidential client's refresh).
import {
  adminClient,
  createPerson,
  setupMachineClient,
  setupTenant,
  type MachineClientSetup,
  type TenantSetup,
} from '../tests/support/admin.js';
import { launchBrowser } from '../tests/support/browser.js';
import { obtainTokens } from '../tests/support/oauth.js';
import { registerExtension } from '../tests/support/extensions.js';
import type { Shape } from './shapes.js';
import { CAPABILITIES, type TokenClaims } from '../wire/decision.js';
import { exportJWK, generateKeyPair, type JWK } from 'jose';

/** Browser flows at once: more only queue on a 2-core machine. */
const PARALLEL_FLOWS = 4;
/** What the machine app's client_credentials grants ask for. */
export const MACHINE_SCOPE = 'svc.profile.self.read';

export interface BenchData {
  tenant: TenantSetup;
  accessToken: string;
  claims: TokenClaims;
  /** One refresh token per connection. */
  refreshTokens: string[];
  /** A confidential app with a service account holding MACHINE_SCOPE, and one refresh token of it per connection. */
  machine: MachineClientSetup & { refreshTokens: string[] };
  /**
   * An access token bound to a DPoP key (issue 49) and that key as JWKs (plain data: the load generator, another
   * process, signs a fresh proof per request with it).
   */
  dpop: { accessToken: string; privateJwk: JWK; publicJwk: JWK };
  extensionId: string;
  /** One person per connection, each with one record of the extension. */
  personIds: string[];
  recordEtags: string[];
}

/** The persons whose records the write mix (K6W) shares among its connections: the last ones of `personIds`. */
export const WRITE_MIX_PERSONS = 3;

/**
 * `refreshChains` false: for a shape that measures R1 alone (the tracing comparison's), which calls with one token:
 * one browser flow instead of one per connection and app, the flows being most of a shape's preparation time. Its
 * `refreshTokens` then holds one token and the machine app's none.
 */
export async function prepare(
  shape: Shape,
  adminToken: string,
  connections: number,
  { refreshChains = true } = {},
): Promise<BenchData> {
  const admin = adminClient({ pdpUrl: shape.pdpUrl, adminToken });
  const tenant = await setupTenant(admin, { capabilities: CAPABILITIES });
  // Limits high enough that the benchmark measures the path, not the limiter's 429s.
  await admin.ok('PATCH', `/tenants/${tenant.tenantId}`, {
    rateLimit: { tenant: { points: 1_000_000, durationS: 60 }, account: { points: 1_000_000, durationS: 60 } },
  });
  const machine = await setupMachineClient(admin, { grant: CAPABILITIES, capabilities: [MACHINE_SCOPE] });
  const extensionId = await registerExtension(admin, tenant.clientId);
  // One person (and record) per connection for W1, and WRITE_MIX_PERSONS more that only the write mix writes: were
  // they shared, W1's connections would hold ETags that the mix's writes (its warm-up included) made stale.
  const personIds: string[] = [];
  for (let i = 0; i < connections + WRITE_MIX_PERSONS; i++) personIds.push(await createPerson(admin, tenant.tenantId));

  const browser = await launchBrowser();
  /** `count` consented tokens of `app`, PARALLEL_FLOWS browser flows at a time. */
  const consented = async (app: TenantSetup & { clientSecret?: string | undefined }, count: number) => {
    const tokens = [];
    while (tokens.length < count) {
      const batch = Math.min(PARALLEL_FLOWS, count - tokens.length);
      tokens.push(
        ...(await Promise.all(
          Array.from({ length: batch }, () =>
            obtainTokens(browser, { authUrl: shape.authUrl, ...app }, app, CAPABILITIES.join(' ')),
          ),
        )),
      );
    }
    return tokens;
  };
  const dpopKey = await generateKeyPair('ES256', { extractable: true });
  let tokens, machineTokens, dpopTokens;
  try {
    tokens = await consented(tenant, refreshChains ? connections : 1);
    machineTokens = refreshChains ? await consented(machine, connections) : [];
    dpopTokens = await obtainTokens(
      browser,
      { authUrl: shape.authUrl, ...tenant },
      tenant,
      CAPABILITIES.join(' '),
      dpopKey,
    );
  } finally {
    await browser.close();
  }
  const accessToken = tokens[0]!.access_token;
  const recordEtags: string[] = [];
  for (const personId of personIds) {
    const res = await fetch(`${shape.gatewayUrl}/v1/persons/${personId}/extensions/${extensionId}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json', 'if-none-match': '*' },
      body: JSON.stringify({ schemaVersion: 1, data: { note: 'bench' } }),
    });
    if (res.status !== 201) throw new Error(`creating a bench record: ${res.status} ${await res.text()}`);
    recordEtags.push(res.headers.get('etag')!);
  }
  return {
    tenant,
    accessToken,
    extensionId,
    personIds,
    recordEtags,
    claims: JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString()),
    refreshTokens: tokens.map((t) => t.refresh_token!),
    dpop: {
      accessToken: dpopTokens.access_token,
      privateJwk: await exportJWK(dpopKey.privateKey),
      publicJwk: await exportJWK(dpopKey.publicKey),
    },
    machine: { ...machine, refreshTokens: machineTokens.map((t) => t.refresh_token!) },
  };
}
