// Machine mode (contract rule 1, §4.1, §5.7–5.10): client_credentials performed by a real OAuth client library
// (openid-client) with client_secret_basic and client_secret_post, workload tokens whose subject is the tenant's
// service account, the effective-scope intersection, revocation of service accounts on the next API and token
// request, and secret rotation. Token responses are held to token-api.yaml, admin answers to admin-api.yaml.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import * as oidc from 'openid-client';
import { decodeJwt, exportJWK, generateKeyPair } from 'jose';
import type { System } from '../../infra/system.js';
import { clientSecretMatches } from '../../issuer/clients.js';
import { ROTATION_OVERLAP_MS } from '../../policies/admin/client-secrets.js';
import { startTestSystem } from '../support/system.js';
import {
  adminClient,
  setupMachineClient,
  setupTenant,
  type AdminClient,
  type MachineClientSetup,
} from '../support/admin.js';
import { callApi } from '../support/api.js';
import { assertResponseMatches, captureResponse } from '../support/openapi.js';
import { basicAuth, postTokenForm } from '../support/oauth.js';

describe('machine-clients', () => {
  let system: System;
  let admin: AdminClient;
  beforeAll(async () => {
    system = await startTestSystem({ ISSUER_ENABLE_CLIENT_CREDENTIALS: 'true' });
    admin = adminClient(system);
  });
  afterAll(async () => {
    await system?.close();
  });

  const BOTH = 'svc.profile.self.read svc.tenant.info.read';

  type MachineClient = MachineClientSetup;

  /** A tenant with a confidential client granted `grant`, and its service account holding `capabilities`. */
  const machineClient = (
    opts: { grant?: string[]; capabilities?: string[]; plan?: 'L1' | 'L2' } = {},
  ): Promise<MachineClient> => setupMachineClient(admin, { ...opts, grant: opts.grant ?? BOTH.split(' ') });

  /** openid-client configured from discovery, every token answer checked against token-api.yaml. */
  async function configFor(app: { clientId: string }, auth: oidc.ClientAuth): Promise<oidc.Configuration> {
    const config = await oidc.discovery(new URL(system.authUrl), app.clientId, undefined, auth, {
      execute: [oidc.allowInsecureRequests],
    });
    config[oidc.customFetch] = async (input, init) => {
      const res = await fetch(input, init as RequestInit);
      if (new URL(input).pathname === '/oauth2/token')
        assertResponseMatches('token', 'issueToken', await captureResponse(res.clone()));
      return res;
    };
    return config;
  }

  const basicConfig = (app: MachineClient, secret = app.clientSecret) => configFor(app, oidc.ClientSecretBasic(secret));

  async function workloadToken(app: MachineClient, scope = BOTH, secret = app.clientSecret) {
    return oidc.clientCredentialsGrant(await basicConfig(app, secret), { scope });
  }

  /** A raw token request (for the shapes openid-client would never send); the answer is held to the document. */
  const postToken = (form: Record<string, string>, headers: Record<string, string> = {}) =>
    postTokenForm(system.authUrl, form, headers);

  /** The token error openid-client surfaced, as {status, error}: from the body, or for a 401 from the Basic challenge. */
  async function grantError(attempt: Promise<unknown>) {
    try {
      await attempt;
    } catch (err) {
      const e = err as { status?: number; error?: string; cause?: { parameters?: { error?: string } }[] };
      return { status: e.status, error: e.error ?? e.cause?.[0]?.parameters?.error };
    }
    throw new Error('the grant succeeded');
  }

  const me = (token: string) => callApi(system.baseUrl, 'getMe', '/me', token);

  describe('client_credentials through openid-client', () => {
    let app: MachineClient;
    beforeAll(async () => {
      app = await machineClient();
    });

    it('is advertised in discovery when enabled', async () => {
      const doc = await (await fetch(`${system.authUrl}/.well-known/openid-configuration`)).json();
      expect(doc.grant_types_supported).toContain('client_credentials');
    });

    it('issues a workload token for the service account with client_secret_basic: no refresh token, 900 s', async () => {
      const tokens = await workloadToken(app);
      expect(tokens.refresh_token).toBeUndefined();
      expect(tokens.expires_in).toBe(900);
      expect(tokens.scope).toBe(BOTH);
      const claims = decodeJwt(tokens.access_token);
      expect(claims).toMatchObject({
        sub: app.serviceAccountId,
        actor_account_id: app.serviceAccountId,
        actor_epoch: 1,
        profile: 'workload',
        client_id: app.clientId,
        tenant_id: app.tenantId,
        aud: 'svc-api',
        scope: BOTH,
      });
      expect(claims.sid).toBeUndefined();
    });

    it('issues the same with client_secret_post, and GET /v1/me answers the service account itself', async () => {
      const tokens = await oidc.clientCredentialsGrant(await configFor(app, oidc.ClientSecretPost(app.clientSecret)), {
        scope: BOTH,
      });
      const res = await me(tokens.access_token);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        subjectType: 'service_account',
        subjectId: app.serviceAccountId,
        tenantId: app.tenantId,
        clientId: app.clientId,
        scopes: BOTH.split(' '),
        actor: { accountId: app.serviceAccountId },
      });
    });

    it('is safe to retry: the same request twice gives two working tokens', async () => {
      const [a, b] = [await workloadToken(app), await workloadToken(app)];
      expect((await me(a.access_token)).status).toBe(200);
      expect((await me(b.access_token)).status).toBe(200);
    });

    it('refuses a wrong secret with 401 invalid_client', async () => {
      expect(await grantError(workloadToken(app, BOTH, 'not-the-secret-0123456789abcdef0123'))).toEqual({
        status: 401,
        error: 'invalid_client',
      });
    });

    it('refuses Basic and client_secret in one request with 401 invalid_client', async () => {
      const r = await postToken(
        { grant_type: 'client_credentials', client_id: app.clientId, client_secret: app.clientSecret, scope: BOTH },
        {
          authorization: basicAuth(app.clientId, app.clientSecret),
        },
      );
      expect({ status: r.status, error: r.body.error }).toEqual({ status: 401, error: 'invalid_client' });
    });

    it.each([
      ['a comma-separated scope', { scope: 'svc.profile.self.read,svc.tenant.info.read' }, 'invalid_scope'],
      ['an unlisted field', { scope: BOTH, resource: 'urn:svc-api' }, 'invalid_grant'],
      [
        'a client assertion type without an assertion (RFC 7521: they go together)',
        { scope: BOTH, client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer' },
        'invalid_client',
      ],
      ['no scope at all (nothing requested, nothing to intersect)', {}, 'invalid_scope'],
    ])('refuses %s with 400 and no token', async (_name, extra, error) => {
      const r = await postToken({
        grant_type: 'client_credentials',
        client_id: app.clientId,
        client_secret: app.clientSecret,
        ...extra,
      });
      expect({ status: r.status, error: r.body.error }).toEqual({ status: 400, error });
      expect(r.body.access_token).toBeUndefined();
    });

    it('refuses a public client with unsupported_grant_type', async () => {
      const pub = await setupTenant(admin, { type: 'public' });
      const r = await postToken({ grant_type: 'client_credentials', client_id: pub.clientId, scope: BOTH });
      expect({ status: r.status, error: r.body.error }).toEqual({ status: 400, error: 'unsupported_grant_type' });
    });

    it(
      'refuses a client without a service account with invalid_grant, ' + 'and a second service account with 409',
      async () => {
        const tenant = await setupTenant(admin, { type: 'confidential' });
        const r = await postToken({
          grant_type: 'client_credentials',
          client_id: tenant.clientId,
          client_secret: tenant.clientSecret!,
          scope: BOTH,
        });
        expect({ status: r.status, error: r.body.error }).toEqual({ status: 400, error: 'invalid_grant' });
        const create = () =>
          admin.checked('createServiceAccount', 'POST', `/tenants/${tenant.tenantId}/service-accounts`, {
            clientId: tenant.clientId,
            name: 'a',
            capabilities: [],
          });
        expect((await create()).status).toBe(201);
        const second = await create();
        expect({ status: second.status, error: second.body.error }).toEqual({ status: 409, error: 'already_exists' });
      },
    );
  });

  describe('client_credentials with private_key_jwt and DPoP (issue 49)', () => {
    it('issues a workload token bound to the proof key, which the gateway serves with a fresh proof only', async () => {
      const tenant = await setupTenant(admin, { type: 'public', capabilities: BOTH.split(' ') });
      const signing = await generateKeyPair('ES256', { extractable: true });
      const client = await admin.ok('POST', `/tenants/${tenant.tenantId}/clients`, {
        slug: 'keyed',
        name: 'Keyed sync',
        kind: 'third_party',
        type: 'confidential',
        redirectUris: ['https://sync.example/cb'],
        tokenEndpointAuthMethod: 'private_key_jwt',
        jwks: { keys: [await exportJWK(signing.publicKey)] },
      });
      expect(client.clientSecret).toBeUndefined();
      await admin.ok('PUT', `/tenants/${tenant.tenantId}/grants/${client.clientId}`, { capabilities: BOTH.split(' ') });
      const account = await admin.ok('POST', `/tenants/${tenant.tenantId}/service-accounts`, {
        clientId: client.clientId,
        name: 'keyed sync',
        capabilities: BOTH.split(' '),
      });
      const config = await configFor({ clientId: client.clientId }, oidc.PrivateKeyJwt(signing.privateKey));
      const key = await oidc.randomDPoPKeyPair('ES256');
      const DPoP = oidc.getDPoPHandle(config, key);
      const tokens = await oidc.clientCredentialsGrant(config, { scope: BOTH }, { DPoP });
      expect(tokens.token_type.toLowerCase()).toBe('dpop');
      expect(tokens.refresh_token).toBeUndefined();
      const claims = decodeJwt(tokens.access_token);
      expect(claims).toMatchObject({ sub: account.accountId, profile: 'workload', cnf: { jkt: expect.any(String) } });

      const res = await oidc.fetchProtectedResource(
        config,
        tokens.access_token,
        new URL(`${system.baseUrl}/me`),
        'GET',
        undefined,
        undefined,
        { DPoP },
      );
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ subjectType: 'service_account', subjectId: account.accountId });
      // As a bearer token, the same token is refused.
      expect((await me(tokens.access_token)).status).toBe(401);
    });
  });

  describe('effective scope of a workload token', () => {
    it('is requested ∩ service account capabilities ∩ tenant grant ∩ plan ceiling ∩ open capabilities', async () => {
      // Plan L1 excludes svc.person.read; the service account lacks svc.tenant.info.read.
      const app = await machineClient({
        plan: 'L1',
        grant: ['svc.profile.self.read', 'svc.tenant.info.read', 'svc.person.read'],
        capabilities: ['svc.profile.self.read', 'svc.person.read'],
      });
      const tokens = await workloadToken(
        app,
        'svc.profile.self.read svc.tenant.info.read svc.person.read svc.person.metadata.read',
      );
      expect(tokens.scope).toBe('svc.profile.self.read');
      expect(await grantError(workloadToken(app, 'svc.tenant.info.read svc.person.read'))).toEqual({
        status: 400,
        error: 'invalid_scope',
      });

      const closed = await admin.checked('updateCapability', 'PATCH', '/capabilities/svc.profile.self.read', {
        enabled: false,
      });
      expect(closed.body).toEqual({ capability: 'svc.profile.self.read', enabled: false });
      try {
        expect(await grantError(workloadToken(app, 'svc.profile.self.read'))).toEqual({
          status: 400,
          error: 'invalid_scope',
        });
      } finally {
        await admin.ok('PATCH', '/capabilities/svc.profile.self.read', { enabled: true });
      }
      expect((await workloadToken(app, 'svc.profile.self.read')).scope).toBe('svc.profile.self.read');
    });
  });

  describe('service account revocation on the next request', () => {
    it('disabled: 403 subject_revoked and no new token (invalid_grant); enabled again: works', async () => {
      const app = await machineClient();
      const { access_token } = await workloadToken(app);
      expect((await me(access_token)).status).toBe(200);

      const off = await admin.checked('updateAccount', 'PATCH', `/accounts/${app.serviceAccountId}`, {
        status: 'disabled',
      });
      expect(off.body).toMatchObject({
        accountId: app.serviceAccountId,
        kind: 'service',
        status: 'disabled',
        clientId: app.clientId,
      });
      expect((await me(access_token)).body.error).toBe('subject_revoked');
      expect(await grantError(workloadToken(app))).toEqual({ status: 400, error: 'invalid_grant' });

      await admin.checked('updateAccount', 'PATCH', `/accounts/${app.serviceAccountId}`, { status: 'active' });
      expect((await me(access_token)).status).toBe(200);
    });

    it('epoch advanced: the old token 403 epoch_changed, a new token carries the new epoch and works', async () => {
      const app = await machineClient();
      const { access_token: old } = await workloadToken(app);
      const res = await admin.checked('advanceAccountEpoch', 'POST', `/accounts/${app.serviceAccountId}/epoch`);
      expect(res.body).toEqual({ accountId: app.serviceAccountId, epoch: 2 });
      const denied = await me(old);
      expect({ status: denied.status, error: denied.body.error }).toEqual({ status: 403, error: 'epoch_changed' });
      const { access_token: fresh } = await workloadToken(app);
      expect(decodeJwt(fresh).actor_epoch).toBe(2);
      expect((await me(fresh)).status).toBe(200);
    });
  });

  describe('client secret rotation (contract §5.9)', () => {
    it('next secret: old and next both authenticate; promote: the old one is refused at once', async () => {
      const app = await machineClient();
      const created = await admin.checked('createClientSecret', 'POST', `/clients/${app.clientId}/secrets`);
      expect(created.status).toBe(201);
      const next = created.body.clientSecret as string;
      expect(next).not.toBe(app.clientSecret);
      const pending = await admin.checked('createClientSecret', 'POST', `/clients/${app.clientId}/secrets`);
      expect(pending.status).toBe(409);

      expect((await workloadToken(app, BOTH, app.clientSecret)).access_token).toBeTruthy();
      expect((await workloadToken(app, BOTH, next)).access_token).toBeTruthy();

      const promoted = await admin.checked('promoteClientSecret', 'POST', `/clients/${app.clientId}/secrets/promote`);
      expect(promoted.body).toMatchObject({ clientId: app.clientId, type: 'confidential' });
      expect(await grantError(workloadToken(app, BOTH, app.clientSecret))).toEqual({
        status: 401,
        error: 'invalid_client',
      });
      expect((await workloadToken(app, BOTH, next)).access_token).toBeTruthy();
      expect(
        (await admin.checked('promoteClientSecret', 'POST', `/clients/${app.clientId}/secrets/promote`)).status,
      ).toBe(422);
    });

    it('the old secret stops by itself once the 7-day overlap is over (checked with an injected clock)', async () => {
      const app = await machineClient();
      const { clientSecret: next } = (
        await admin.checked('createClientSecret', 'POST', `/clients/${app.clientId}/secrets`)
      ).body;
      const at = (ms: number) => new Date(Date.now() + ms);
      const knex = system.db.knex;
      expect(await clientSecretMatches(knex, app.clientId, app.clientSecret, at(ROTATION_OVERLAP_MS - 60_000))).toBe(
        true,
      );
      expect(await clientSecretMatches(knex, app.clientId, app.clientSecret, at(ROTATION_OVERLAP_MS + 60_000))).toBe(
        false,
      );
      expect(await clientSecretMatches(knex, app.clientId, next, at(ROTATION_OVERLAP_MS + 60_000))).toBe(true);
    });

    it('refuses a secret for a public client (422) and an unknown client (404)', async () => {
      const pub = await setupTenant(admin, { type: 'public' });
      expect((await admin.checked('createClientSecret', 'POST', `/clients/${pub.clientId}/secrets`)).status).toBe(422);
      expect((await admin.checked('createClientSecret', 'POST', '/clients/tp_nobody_nothing/secrets')).status).toBe(
        404,
      );
    });
  });
});
