// The admin API (platform-interfaces.md) as an operator and a tenant admin use it; every answer is held to
// docs/openapi/admin-api.yaml.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import type { System } from '../../infra/system.js';
import { startTestSystem } from '../support/system.js';
import { adminClient, setupTenant, type AdminClient } from '../support/admin.js';
import { listServiceAccounts } from '../../policies/admin/accounts.js';
import { listExtensions } from '../../policies/admin/extensions.js';
import { verifySecret } from '../../common/secrets.js';
import { DECISION_PATH } from '../../wire/decision.js';
import { authorizationRequest, discover } from '../support/oauth.js';
import { exportJWK, generateKeyPair } from 'jose';

describe('admin-api', () => {
  let system: System;
  let admin: AdminClient;
  beforeAll(async () => {
    system = await startTestSystem();
    admin = adminClient(system);
  });
  afterAll(async () => {
    await system?.close();
  });

  const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const label = () => `a${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;

  describe('operator authentication', () => {
    it('answers a missing or wrong operator token with 401 invalid_token', async () => {
      const anonymous = adminClient(system, 'wrong-token-0123456789');
      const res = await anonymous.checked('createTenant', 'POST', '/tenants', {
        label: label(),
        displayName: 'X',
        plan: 'L1',
      });
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_token');
    });
  });

  describe('the PDP decision endpoint', () => {
    it.each([
      [
        'a decision request',
        JSON.stringify({
          requestId: 'r-0000001',
          token: {},
          capability: 'svc.profile.self.read',
          resource: { type: 'self' },
        }),
      ],
      ['a body that is not JSON (refused before it is read)', '{"requestId":'],
    ])(
      'answers only the gateway: %s without the internal secret gets 403 forbidden and no decision',
      async (_name, body) => {
        const res = await fetch(`${system.pdpUrl}${DECISION_PATH}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-internal-secret': 'guess' },
          body,
        });
        expect(res.status).toBe(403);
        const answer = await res.json();
        expect(answer.error).toBe('forbidden');
        expect(answer.allow).toBeUndefined();
      },
    );
  });

  describe('tenants', () => {
    it('creates a tenant as active with the given plan, and refuses a taken label with 409 already_exists', async () => {
      const l = label();
      const created = await admin.checked('createTenant', 'POST', '/tenants', {
        label: l,
        displayName: 'Acme',
        plan: 'L1',
      });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        tenantId: expect.stringMatching(/^ten_[0-9a-hjkmnp-tv-z]{26}$/),
        label: l,
        displayName: 'Acme',
        plan: 'L1',
        status: 'active',
      });
      const again = await admin.checked('createTenant', 'POST', '/tenants', {
        label: l,
        displayName: 'Other',
        plan: 'L2',
      });
      expect(again.status).toBe(409);
      expect(again.body.error).toBe('already_exists');
    });

    it.each([
      ['an unknown plan', { displayName: 'X', plan: 'L9' }],
      ['an unlisted field', { displayName: 'X', plan: 'L1', contacts: [] }],
      ['a label that cannot be part of a client id', { displayName: 'X', plan: 'L1', label: 'Has_Underscore' }],
    ])('refuses %s with 422 schema_invalid and stores nothing', async (_name, body) => {
      const before = await system.db.knex('tenants').count({ n: '*' }).first();
      const res = await admin.checked('createTenant', 'POST', '/tenants', { label: label(), ...body });
      expect(res.status).toBe(422);
      expect(res.body.error).toBe('schema_invalid');
      expect(await system.db.knex('tenants').count({ n: '*' }).first()).toEqual(before);
    });

    it('answers malformed JSON with 422 schema_invalid, not 500', async () => {
      const res = await fetch(`${system.pdpUrl}/admin/v1/tenants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${system.adminToken}`, 'content-type': 'application/json' },
        body: '{"label": ',
      });
      expect(res.status).toBe(422);
      expect((await res.json()).error).toBe('schema_invalid');
    });

    it(
      'answers a body nested thousands of levels deep, or holding a lone surrogate, ' +
        'with 422 schema_invalid, never a 5xx, and registers nothing',
      async () => {
        const { tenantId } = await admin.ok('POST', '/tenants', { label: label(), displayName: 'Deep', plan: 'L2' });
        const { clientId } = await admin.ok('POST', `/tenants/${tenantId}/clients`, {
          slug: 'deep',
          name: 'Deep',
          kind: 'third_party',
          type: 'confidential',
          redirectUris: ['https://deep.example/cb'],
        });
        // A schema with a 5,000-level default: 10 KB, within the body limit; serializing it once overflowed the stack
        // (503).
        const deepSchema =
          '{"name":"deep","schemas":{"1":{"type":"object",' + `"default":${'['.repeat(5000)}${']'.repeat(5000)}}}}`;
        const res = await fetch(`${system.pdpUrl}/admin/v1/clients/${clientId}/extensions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${system.adminToken}`, 'content-type': 'application/json' },
          body: deepSchema,
        });
        expect(res.status).toBe(422);
        expect((await res.json()).error).toBe('schema_invalid');
        expect(await system.db.knex('extensions').where({ client_id: clientId }).select('id')).toEqual([]);
        // A lone surrogate escape, which jsonb refuses to store (that was a 503 too), is refused the same way.
        const lone = await fetch(`${system.pdpUrl}/admin/v1/clients/${clientId}/extensions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${system.adminToken}`, 'content-type': 'application/json' },
          body: '{"name":"lone","schemas":{"1":{"type":"object","description":"\\ud800"}}}',
        });
        expect({ status: lone.status, error: (await lone.json()).error }).toEqual({
          status: 422,
          error: 'schema_invalid',
        });
        expect(await system.db.knex('extensions').where({ client_id: clientId }).select('id')).toEqual([]);
      },
    );

    it(
      'answers a NUL character in input with 422 schema_invalid ' + 'and a malformed path escape with 404, never a 5xx',
      async () => {
        const nul = await admin.checked('createTenant', 'POST', '/tenants', {
          label: label(),
          displayName: 'a\u0000b',
          plan: 'L1',
        });
        expect(nul.status).toBe(422);
        expect(nul.body.error).toBe('schema_invalid');
        const badEscape = await admin.checked('updateTenant', 'PATCH', '/tenants/%E0%A4%A', { plan: 'L2' });
        expect(badEscape.status).toBe(404);
        const nulInPath = await admin.checked('updateClient', 'PATCH', '/clients/tp_x%00', { status: 'disabled' });
        expect(nulInPath.status).toBeLessThan(500);
      },
    );

    it('changes plan, status and rate limits, and answers 404 for an unknown tenant', async () => {
      const { body: t } = await admin.checked('createTenant', 'POST', '/tenants', {
        label: label(),
        displayName: 'Acme',
        plan: 'L1',
      });
      const rateLimit = { tenant: { points: 10, durationS: 60 }, account: { points: 5, durationS: 60 } };
      const res = await admin.checked('updateTenant', 'PATCH', `/tenants/${t.tenantId}`, {
        plan: 'L2',
        status: 'suspended',
        rateLimit,
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ tenantId: t.tenantId, plan: 'L2', status: 'suspended', rateLimit });
      expect(await system.db.knex('tenants').where({ id: t.tenantId }).first('plan', 'status', 'rate_limit')).toEqual({
        plan: 'L2',
        status: 'suspended',
        rate_limit: rateLimit,
      });
      const missing = await admin.checked('updateTenant', 'PATCH', '/tenants/ten_00000000000000000000000000', {
        plan: 'L2',
      });
      expect(missing.status).toBe(404);
      expect(missing.body.error).toBe('not_found');
    });
  });

  describe('lists', () => {
    it('pages through tenants in creation order with a cursor, filtered by status and plan', async () => {
      const created = [];
      for (const plan of ['L1', 'L2', 'L1'] as const)
        created.push(
          (await admin.ok('POST', '/tenants', { label: label(), displayName: 'Listed', plan })).tenantId as string,
        );
      await admin.ok('PATCH', `/tenants/${created[2]}`, { status: 'suspended' });
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { status: number; body: { items: { tenantId: string }[]; nextCursor: string | null } } =
          await admin.checked('listTenants', 'GET', `/tenants?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
        expect(page.status).toBe(200);
        expect(page.body.items.length).toBeLessThanOrEqual(2);
        seen.push(...page.body.items.map((t) => t.tenantId));
        cursor = page.body.nextCursor;
      } while (cursor);
      expect(seen).toEqual([...seen].sort()); // ULIDs: creation order
      expect(seen).toEqual(expect.arrayContaining(created));
      const suspendedL1 = await admin.checked('listTenants', 'GET', '/tenants?status=suspended&plan=L1&limit=100');
      expect(suspendedL1.body.items.map((t: { tenantId: string }) => t.tenantId)).toContain(created[2]);
      expect(
        suspendedL1.body.items.every(
          (t: { status: string; plan: string }) => t.status === 'suspended' && t.plan === 'L1',
        ),
      ).toBe(true);
      for (const query of ['limit=0', 'limit=101', 'cursor=bm9wZQ', 'status=gone', 'unknown=1']) {
        const bad = await admin.checked('listTenants', 'GET', `/tenants?${query}`);
        expect({ query, status: bad.status, error: bad.body.error }).toEqual({
          query,
          status: 422,
          error: 'schema_invalid',
        });
      }
    });

    it(
      "lists a tenant's persons with their login here, " +
        'searchable by a part of a name or username, with ended relationships kept apart',
      async () => {
        const { tenantId } = await admin.ok('POST', '/tenants', { label: label(), displayName: 'People', plan: 'L2' });
        const make = (displayName: string, username: string) =>
          admin.ok('POST', `/tenants/${tenantId}/persons`, { displayName, username, password: 'long enough password' });
        const ada = await make('Ada Lovelace', 'ada');
        const alan = await make('Alan Turing', 'aturing');
        const grace = await make('Grace Hopper', 'grace_h');
        await admin.ok('DELETE', `/tenants/${tenantId}/persons/${alan.personId}`);
        const list = (query = '') => admin.checked('listPersons', 'GET', `/tenants/${tenantId}/persons?${query}`);
        const all = await list();
        expect(all.status).toBe(200);
        expect(all.body.items).toEqual(
          [ada, alan, grace].map((p) =>
            expect.objectContaining({ personId: p.personId, accountId: p.accountId, accountStatus: 'active' }),
          ),
        );
        expect(all.body.items[1]).toMatchObject({
          displayName: 'Alan Turing',
          username: 'aturing',
          relationship: 'ended',
        });
        const ids = async (query: string) =>
          (await list(query)).body.items.map((p: { personId: string }) => p.personId);
        // A part anywhere in the name or username, in any case.
        expect(await ids('q=TURING')).toEqual([alan.personId]);
        expect(await ids('q=ace')).toEqual([ada.personId, grace.personId]);
        expect(await ids('q=grace_')).toEqual([grace.personId]); // _ is a character here, not a wildcard
        expect(await ids('q=gr%25')).toEqual([]);
        expect(await ids('relationship=ended')).toEqual([alan.personId]);
        const first = await list('limit=1');
        expect(first.body.items.map((p: { personId: string }) => p.personId)).toEqual([ada.personId]);
        expect(await ids(`limit=1&cursor=${first.body.nextCursor}`)).toEqual([alan.personId]);
        expect(
          (await admin.checked('listPersons', 'GET', '/tenants/ten_00000000000000000000000000/persons')).status,
        ).toBe(404);
      },
    );

    it("lists a tenant's clients, service accounts and admin keys, never a secret or a key", async () => {
      const { tenantId, label: tenantLabel } = await admin.ok('POST', '/tenants', {
        label: label(),
        displayName: 'Apps',
        plan: 'L2',
      });
      const app = (slug: string, type: string) =>
        admin.ok('POST', `/tenants/${tenantId}/clients`, {
          slug,
          name: slug,
          kind: 'third_party',
          type,
          redirectUris: ['https://app.example/cb'],
        });
      const sync = await app('sync', 'confidential');
      const web = await app('web', 'public');
      await admin.ok('PATCH', `/clients/${web.clientId}`, { status: 'disabled' });
      const account = await admin.ok('POST', `/tenants/${tenantId}/service-accounts`, {
        clientId: sync.clientId,
        name: 'Nightly',
        capabilities: ['svc.person.read'],
      });
      const key = await admin.ok('POST', `/tenants/${tenantId}/admin-keys`);
      const clients = await admin.checked('listClients', 'GET', `/tenants/${tenantId}/clients`);
      expect(clients.body.items.map((c: { clientId: string }) => c.clientId)).toEqual([
        `tp_${tenantLabel}_sync`,
        `tp_${tenantLabel}_web`,
      ]);
      expect(JSON.stringify(clients.body)).not.toContain(sync.clientSecret);
      const disabled = await admin.checked('listClients', 'GET', `/tenants/${tenantId}/clients?status=disabled`);
      expect(disabled.body.items.map((c: { clientId: string }) => c.clientId)).toEqual([web.clientId]);
      const accounts = await admin.checked('listServiceAccounts', 'GET', `/tenants/${tenantId}/service-accounts`);
      expect(accounts.body).toEqual({
        items: [
          expect.objectContaining({ accountId: account.accountId, capabilities: ['svc.person.read'], kind: 'service' }),
        ],
        nextCursor: null,
      });
      const keys = await admin.checked('listTenantAdminKeys', 'GET', `/tenants/${tenantId}/admin-keys`);
      expect(keys.body).toEqual({
        items: [{ keyId: key.keyId, tenantId, createdAt: expect.any(String) }],
        nextCursor: null,
      });
      expect(JSON.stringify(keys.body)).not.toContain(key.key.split('.')[1]);
      // A cursor of one list is not one of another.
      const page = await admin.checked('listClients', 'GET', `/tenants/${tenantId}/clients?limit=1`);
      expect(
        (
          await admin.checked(
            'listServiceAccounts',
            'GET',
            `/tenants/${tenantId}/service-accounts?cursor=${page.body.nextCursor}`,
          )
        ).status,
      ).toBe(422);
    });
  });

  describe('persons, clients and grants', () => {
    let tenantId: string;
    let tenantLabel: string;
    beforeAll(async () => {
      tenantLabel = label();
      tenantId = (await admin.ok('POST', '/tenants', { label: tenantLabel, displayName: 'Acme', plan: 'L2' })).tenantId;
    });

    it(
      'creates a person with a login account and the tenant relationship, ' +
        'and ends the relationship keeping the person',
      async () => {
        const res = await admin.checked('createPerson', 'POST', `/tenants/${tenantId}/persons`, {
          displayName: 'Ada',
          username: `ada-${label()}`,
          password: 'long enough password',
        });
        expect(res.status).toBe(201);
        const { personId, accountId } = res.body;
        expect(personId).toMatch(/^psn_/);
        expect(accountId).toMatch(/^acc_/);
        const account = await system.db.knex('accounts').where({ id: accountId }).first();
        expect(account).toMatchObject({ kind: 'person', person_id: personId, status: 'active', epoch: 1 });
        expect(account.password_hash).not.toContain('long enough password');

        expect(
          (await admin.checked('endPersonRelationship', 'DELETE', `/tenants/${tenantId}/persons/${personId}`)).status,
        ).toBe(204);
        const rel = await system.db
          .knex('tenant_person_relationships')
          .where({ tenant_id: tenantId, person_id: personId })
          .first();
        expect(rel.ended_at).not.toBeNull();
        expect(await system.db.knex('persons').where({ id: personId }).first()).toBeTruthy();
        expect(
          (await admin.checked('endPersonRelationship', 'DELETE', `/tenants/${tenantId}/persons/${personId}`)).status,
        ).toBe(404);
      },
    );

    it('refuses a taken username with 409 already_exists and leaves no half-created person behind', async () => {
      const username = `bob-${label()}`;
      await admin.ok('POST', `/tenants/${tenantId}/persons`, {
        displayName: 'Bob',
        username,
        password: 'long enough password',
      });
      const persons = await system.db.knex('persons').count({ n: '*' }).first();
      const res = await admin.checked('createPerson', 'POST', `/tenants/${tenantId}/persons`, {
        displayName: 'Bob 2',
        username,
        password: 'another password',
      });
      expect(res.status).toBe(409);
      expect(res.body.error).toBe('already_exists');
      expect(await system.db.knex('persons').count({ n: '*' }).first()).toEqual(persons);
    });

    it(
      'creates a confidential third-party client with a tp_<label>_<slug> id, ' +
        'shows the secret once and stores only its hash',
      async () => {
        const res = await admin.checked('createClient', 'POST', `/tenants/${tenantId}/clients`, {
          slug: 'sync',
          name: 'Sync',
          kind: 'third_party',
          type: 'confidential',
          redirectUris: ['https://app.example/cb'],
        });
        expect(res.status).toBe(201);
        expect(res.body.clientId).toBe(`tp_${tenantLabel}_sync`);
        const secret = res.body.clientSecret as string;
        expect(secret.length).toBeGreaterThanOrEqual(32);
        const stored = await system.db.knex('client_secrets').where({ client_id: res.body.clientId });
        expect(stored).toHaveLength(1);
        expect(stored[0].secret_hash).not.toContain(secret);
        expect(await verifySecret(secret, stored[0].secret_hash)).toBe(true);

        const dup = await admin.checked('createClient', 'POST', `/tenants/${tenantId}/clients`, {
          slug: 'sync',
          name: 'Sync 2',
          kind: 'third_party',
          type: 'public',
          redirectUris: ['https://app.example/cb'],
        });
        expect(dup.status).toBe(409);
      },
    );

    it('replaces, reads and withdraws a grant, refusing capabilities outside the catalogue', async () => {
      const { body: client } = await admin.checked('createClient', 'POST', `/tenants/${tenantId}/clients`, {
        slug: 'notes',
        name: 'Notes',
        kind: 'third_party',
        type: 'public',
        redirectUris: ['http://127.0.0.1:8400/callback'],
      });
      const path = `/tenants/${tenantId}/grants/${client.clientId}`;
      const put = await admin.checked('putGrant', 'PUT', path, {
        capabilities: ['svc.tenant.info.read', 'svc.profile.self.read'],
      });
      expect(put.body).toEqual({
        tenantId,
        clientId: client.clientId,
        capabilities: ['svc.profile.self.read', 'svc.tenant.info.read'],
      });
      const bad = await admin.checked('putGrant', 'PUT', path, { capabilities: ['svc.admin'] });
      expect(bad.status).toBe(422);
      expect((await admin.checked('getGrant', 'GET', path)).body.capabilities).toEqual([
        'svc.profile.self.read',
        'svc.tenant.info.read',
      ]);
      expect((await admin.checked('deleteGrant', 'DELETE', path)).status).toBe(204);
      expect((await admin.checked('getGrant', 'GET', path)).body.capabilities).toEqual([]);
      const otherTenant = await admin.checked(
        'getGrant',
        'GET',
        `/tenants/ten_00000000000000000000000000/grants/${client.clientId}`,
      );
      expect(otherTenant.status).toBe(404);
    });

    it(
      'serialises concurrent replacements of one grant: ' + 'every PUT succeeds and one of them is what is stored',
      async () => {
        const { body: client } = await admin.checked('createClient', 'POST', `/tenants/${tenantId}/clients`, {
          slug: 'racy',
          name: 'Racy',
          kind: 'third_party',
          type: 'public',
          redirectUris: ['http://127.0.0.1:8400/callback'],
        });
        const path = `/tenants/${tenantId}/grants/${client.clientId}`;
        const sets = [
          ['svc.profile.self.read'],
          ['svc.tenant.info.read'],
          ['svc.profile.self.read', 'svc.person.read'],
          ['svc.person.read'],
        ];
        for (let round = 0; round < 5; round++) {
          const statuses = await Promise.all(
            sets.map((capabilities) => admin.call('PUT', path, { capabilities }).then((r) => r.status)),
          );
          expect(statuses).toEqual([200, 200, 200, 200]);
        }
        const stored = (await admin.ok('GET', path)).capabilities;
        expect(sets.map((c) => [...c].sort())).toContainEqual(stored);
      },
    );

    it('disables and re-enables a client', async () => {
      const { body: client } = await admin.checked('createClient', 'POST', `/tenants/${tenantId}/clients`, {
        slug: 'toggle',
        name: 'Toggle',
        kind: 'third_party',
        type: 'public',
        redirectUris: ['http://127.0.0.1:8400/callback'],
      });
      const off = await admin.checked('updateClient', 'PATCH', `/clients/${client.clientId}`, { status: 'disabled' });
      expect(off.body.status).toBe('disabled');
      const on = await admin.checked('updateClient', 'PATCH', `/clients/${client.clientId}`, { status: 'active' });
      expect(on.body.status).toBe('active');
    });

    it(
      "changes a client's name, redirect URIs and origins (a list replaces the stored one), " +
        'audited as client.update; an empty or bad change stores nothing',
      async () => {
        const { body: client } = await admin.checked('createClient', 'POST', `/tenants/${tenantId}/clients`, {
          slug: 'settings',
          name: 'Settings',
          kind: 'third_party',
          type: 'public',
          redirectUris: ['https://settings.example/cb'],
          allowedOrigins: ['https://settings.example'],
        });
        const path = `/clients/${client.clientId}`;
        const changed = await admin.checked('updateClient', 'PATCH', path, {
          name: 'Settings v2',
          redirectUris: ['https://settings.example/v2/cb'],
          allowedOrigins: [],
        });
        expect(changed.status).toBe(200);
        expect(changed.body).toMatchObject({
          name: 'Settings v2',
          status: 'active',
          redirectUris: ['https://settings.example/v2/cb'],
          allowedOrigins: [],
        });
        const audit = await admin.ok('GET', `/tenants/${tenantId}/audit?action=client.update`);
        expect(audit.items.find((e: { target: { id: string } }) => e.target.id === client.clientId)?.changes).toEqual({
          name: { from: 'Settings', to: 'Settings v2' },
          redirectUris: { from: ['https://settings.example/cb'], to: ['https://settings.example/v2/cb'] },
          allowedOrigins: { from: ['https://settings.example'], to: [] },
        });
        for (const bad of [
          {},
          { redirectUris: [] },
          { redirectUris: ['https://x.example/cb#frag'] },
          { slug: 'renamed' },
          { name: '  ' },
        ]) {
          const refused = await admin.checked('updateClient', 'PATCH', path, bad);
          expect([JSON.stringify(bad), refused.status, refused.body.error]).toEqual([
            JSON.stringify(bad),
            422,
            'schema_invalid',
          ]);
        }
        expect(
          (await admin.ok('GET', `/tenants/${tenantId}/clients`)).items.find(
            (c: { clientId: string }) => c.clientId === client.clientId,
          ),
        ).toMatchObject({ name: 'Settings v2', redirectUris: ['https://settings.example/v2/cb'] });
      },
    );

    it(
      'refuses, on registration and on change, an http redirect URI whose host is not a loopback IP literal, ' +
        'localhost, another scheme, a fragment, a user, a wildcard: 422 naming every refused URI in words',
      async () => {
        const accepted = [
          'https://app.example/cb',
          'http://127.0.0.1:8400/cb',
          'http://127.9.9.9/cb',
          'http://[::1]/cb',
        ];
        const refusedUris: [string, string][] = [
          ['http://app.example.com/cb', 'http is allowed only for 127.0.0.1 and [::1] (use https)'],
          ['http://localhost:8400/cb', 'use 127.0.0.1 or [::1] instead of localhost'],
          ['com.example.app:/cb', 'the com.example.app scheme is not accepted'],
          ['https://app.example/cb#done', 'no fragment'],
          ['https://me:pw@app.example/cb', 'no user name or password'],
          ['https://*.app.example/cb', 'no wildcard'],
          ['/cb', 'not an absolute URI'],
        ];
        const body = (redirectUris: string[]) => ({
          slug: 'loopback',
          name: 'Loopback',
          kind: 'third_party',
          type: 'public',
          redirectUris,
        });
        const refused = await admin.checked(
          'createClient',
          'POST',
          `/tenants/${tenantId}/clients`,
          body([...accepted, ...refusedUris.map(([uri]) => uri)]),
        );
        expect([refused.status, refused.body.error]).toEqual([422, 'schema_invalid']);
        for (const [uri, why] of refusedUris)
          expect(refused.body.message).toMatch(new RegExp(`${escaped(uri)}: [^;]*${escaped(why)}`));
        for (const uri of accepted) expect(refused.body.message).not.toContain(`${uri}:`);
        expect(refused.body.message).not.toMatch(/redirectUris/);
        expect(await system.db.knex('clients').where({ id: `tp_${tenantLabel}_loopback` })).toHaveLength(0);

        const { body: client } = await admin.checked(
          'createClient',
          'POST',
          `/tenants/${tenantId}/clients`,
          body(accepted),
        );
        expect(client.redirectUris).toEqual(accepted);
        const path = `/clients/${client.clientId}`;
        const change = await admin.checked('updateClient', 'PATCH', path, {
          redirectUris: ['http://app.example.com/cb', 'https://app.example/v2/cb', 'http://10.0.0.1/cb'],
        });
        expect([change.status, change.body.error]).toEqual([422, 'schema_invalid']);
        expect(change.body.message).toBe(
          'http://app.example.com/cb: http is allowed only for 127.0.0.1 and [::1] (use https); ' +
            'http://10.0.0.1/cb: http is allowed only for 127.0.0.1 and [::1] (use https)',
        );
        expect((await admin.ok('GET', `/tenants/${tenantId}/clients`)).items).toContainEqual(
          expect.objectContaining({ clientId: client.clientId, redirectUris: accepted }),
        );
      },
    );

    it(
      'keeps an app registered before the rule working until its redirect URIs are changed: ' +
        'the issuer still accepts its http redirect URI, and a change of its name alone is saved',
      async () => {
        const { body: client } = await admin.checked('createClient', 'POST', `/tenants/${tenantId}/clients`, {
          slug: 'legacy',
          name: 'Legacy',
          kind: 'third_party',
          type: 'public',
          redirectUris: ['https://legacy.example/cb'],
        });
        const legacyUri = 'http://legacy.example/cb';
        // As stored before the rule existed.
        await system.db
          .knex('clients')
          .where({ id: client.clientId })
          .update({ redirect_uris: JSON.stringify([legacyUri]) });
        const app = { authUrl: system.authUrl, clientId: client.clientId, redirectUri: legacyUri };
        const request = await authorizationRequest(await discover(app), legacyUri, 'svc.profile.self.read');
        const answer = await fetch(request.url, { redirect: 'manual' });
        // Sent back to the stored URI (with an error: the app holds no grant): the issuer took it as registered, where
        // an unregistered redirect URI gets a 400 page and no redirect.
        expect(answer.status).toBe(303);
        expect(answer.headers.get('location')).toMatch(new RegExp(`^${escaped(legacyUri)}\\?(.*&)?error=`));

        const renamed = await admin.checked('updateClient', 'PATCH', `/clients/${client.clientId}`, {
          name: 'Legacy 2',
        });
        expect(renamed.status).toBe(200);
        expect(renamed.body.redirectUris).toEqual([legacyUri]);
      },
    );
  });

  describe('client security settings (issue 49)', () => {
    let tenantId: string;
    let publicJwk: Record<string, unknown>;
    let privateJwk: Record<string, unknown>;
    beforeAll(async () => {
      tenantId = (await admin.ok('POST', '/tenants', { label: label(), displayName: 'Sec', plan: 'L2' })).tenantId;
      const pair = await generateKeyPair('ES256', { extractable: true });
      publicJwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1' };
      privateJwk = { ...(await exportJWK(pair.privateKey)), kid: 'leaked' };
    });
    let n = 0;
    const create = (fields: Record<string, unknown>) =>
      admin.checked('createClient', 'POST', `/tenants/${tenantId}/clients`, {
        slug: `app${++n}`,
        name: 'App',
        kind: 'third_party',
        type: 'confidential',
        redirectUris: ['https://app.example/cb'],
        ...fields,
      });
    const stored = (clientId: string) => system.db.knex('clients').where({ id: clientId }).first();

    it("keeps today's defaults when none is given: client_secret_basic with a secret, nothing required", async () => {
      const res = await create({});
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        tokenEndpointAuthMethod: 'client_secret_basic',
        dpopBoundAccessTokens: false,
        requirePushedAuthorizationRequests: false,
        securityProfile: null,
        clientSecret: expect.any(String),
      });
      expect(res.body).not.toHaveProperty('jwks');
      const pub = await create({ type: 'public' });
      expect(pub.body).toMatchObject({ tokenEndpointAuthMethod: 'none' });
    });

    it('registers private_key_jwt with public keys and no secret, and fapi2 with everything it implies', async () => {
      const keyApp = await create({ tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [publicJwk] } });
      expect(keyApp.status).toBe(201);
      expect(keyApp.body).toMatchObject({ tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [publicJwk] } });
      expect(keyApp.body).not.toHaveProperty('clientSecret');
      expect(await system.db.knex('client_secrets').where({ client_id: keyApp.body.clientId })).toEqual([]);

      const fapi = await create({ securityProfile: 'fapi2', jwks: { keys: [publicJwk] } });
      expect(fapi.status).toBe(201);
      expect(fapi.body).toMatchObject({
        tokenEndpointAuthMethod: 'private_key_jwt',
        dpopBoundAccessTokens: true,
        requirePushedAuthorizationRequests: true,
        securityProfile: 'fapi2',
      });
      expect(await stored(fapi.body.clientId)).toMatchObject({
        token_endpoint_auth_method: 'private_key_jwt',
        dpop_bound_access_tokens: true,
        require_pushed_authorization_requests: true,
        security_profile: 'fapi2',
      });

      const post = await create({ tokenEndpointAuthMethod: 'client_secret_post', dpopBoundAccessTokens: true });
      expect(post.body).toMatchObject({ tokenEndpointAuthMethod: 'client_secret_post', dpopBoundAccessTokens: true });
      expect(post.body.clientSecret).toEqual(expect.any(String));
    });

    it.each<[string, Record<string, unknown>, RegExp]>([
      [
        'a private key in jwks, named by its kid',
        { tokenEndpointAuthMethod: 'private_key_jwt', jwks: 'PRIVATE' },
        /jwks: key "leaked" holds private member d/,
      ],
      [
        'a symmetric key',
        { tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [{ kty: 'oct', k: 'c2VjcmV0' }] } },
        /jwks: key 0 holds private member k/,
      ],
      [
        'a key that is no key',
        { tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [{ kty: 'EC', crv: 'P-256', x: 'AA', y: 'AA' }] } },
        /jwks: key 0 is not a valid EC public key/,
      ],
      ['private_key_jwt without keys', { tokenEndpointAuthMethod: 'private_key_jwt' }, /jwks: private_key_jwt needs/],
      ['keys without private_key_jwt', { jwks: 'PUBLIC' }, /jwks: only an app using private_key_jwt/],
      [
        'an auth method for a public app',
        { type: 'public', tokenEndpointAuthMethod: 'client_secret_post' },
        /public app/,
      ],
      ['fapi2 for a public app', { type: 'public', securityProfile: 'fapi2' }, /fapi2 is for confidential apps/],
      [
        'fapi2 with a secret',
        { securityProfile: 'fapi2', tokenEndpointAuthMethod: 'client_secret_basic' },
        /requires private_key_jwt/,
      ],
      ['fapi2 without DPoP', { securityProfile: 'fapi2', jwks: 'PUBLIC', dpopBoundAccessTokens: false }, /DPoP-bound/],
      [
        'fapi2 with a loopback http redirect URI',
        { securityProfile: 'fapi2', jwks: 'PUBLIC', redirectUris: ['http://127.0.0.1:8400/cb'] },
        /http:\/\/127\.0\.0\.1:8400\/cb: the fapi2 profile accepts https redirect URIs only/,
      ],
      ['an unknown profile', { securityProfile: 'fapi1' }, /securityProfile/],
    ])('refuses %s with 422 schema_invalid and registers nothing', async (_name, fields, message) => {
      const jwks = { PRIVATE: { keys: [publicJwk, privateJwk] }, PUBLIC: { keys: [publicJwk] } };
      const body = { ...fields, ...(typeof fields.jwks === 'string' && { jwks: jwks[fields.jwks as 'PUBLIC'] }) };
      const before = await system.db.knex('clients').where({ tenant_id: tenantId }).count({ n: '*' });
      const res = await create(body);
      expect([res.status, res.body.error]).toEqual([422, 'schema_invalid']);
      expect(res.body.message).toMatch(message);
      expect(await system.db.knex('clients').where({ tenant_id: tenantId }).count({ n: '*' })).toEqual(before);
    });
  });

  describe("the console's listings", () => {
    it(
      'read all service accounts and all extensions of a tenant in ' +
        'one statement each, with their capabilities and schema versions',
      async () => {
        const tenant = await setupTenant(admin, { type: 'confidential' });
        const other = await admin.ok('POST', `/tenants/${tenant.tenantId}/clients`, {
          slug: 'other',
          name: 'Other',
          kind: 'third_party',
          type: 'confidential',
          redirectUris: [tenant.redirectUri],
        });
        const withTwo = await admin.ok('POST', `/tenants/${tenant.tenantId}/service-accounts`, {
          clientId: tenant.clientId,
          name: 'Two',
          capabilities: ['svc.tenant.info.read', 'svc.profile.self.read'],
        });
        const withNone = await admin.ok('POST', `/tenants/${tenant.tenantId}/service-accounts`, {
          clientId: other.clientId,
          name: 'None',
          capabilities: [],
        });
        const schema = { type: 'object', properties: { n: { type: 'integer' } }, additionalProperties: false };
        const twoVersions = await admin.ok('POST', `/clients/${tenant.clientId}/extensions`, {
          name: 'two versions',
          schemas: { 1: schema, 2: schema },
        });
        const oneVersion = await admin.ok('POST', `/clients/${other.clientId}/extensions`, {
          name: 'one version',
          schemas: { 1: schema },
        });

        const statements: string[] = [];
        const count = (q: { sql: string }) => void statements.push(q.sql);
        system.db.knex.on('query', count);
        try {
          const accounts = await listServiceAccounts(system.db.knex, tenant.tenantId);
          const extensions = await listExtensions(system.db.knex, tenant.tenantId);
          expect(statements).toHaveLength(2);
          expect(accounts.map((a) => [a.accountId, 'capabilities' in a && a.capabilities])).toEqual([
            [withTwo.accountId, ['svc.profile.self.read', 'svc.tenant.info.read']],
            [withNone.accountId, []],
          ]);
          expect(extensions.map((e) => [e.extensionId, e.schemaVersions])).toEqual([
            [twoVersions.extensionId, [1, 2]],
            [oneVersion.extensionId, [1]],
          ]);
        } finally {
          system.db.knex.off('query', count);
        }
      },
    );
  });

  describe('objects read by id, with ETags, and changes with If-Match', () => {
    /** A tenant with an app, its grant, a service account and an extension, and a key of the tenant. */
    async function furnished() {
      const t = await setupTenant(admin, { type: 'confidential' });
      const sa = await admin.ok('POST', `/tenants/${t.tenantId}/service-accounts`, {
        clientId: t.clientId,
        name: 'Worker',
        capabilities: ['svc.person.read'],
      });
      const ext = await admin.ok('POST', `/clients/${t.clientId}/extensions`, {
        name: 'prefs',
        schemas: { '1': { type: 'object' } },
      });
      const { key } = await admin.ok('POST', `/tenants/${t.tenantId}/admin-keys`);
      return {
        ...t,
        serviceAccountId: sa.accountId as string,
        extensionId: ext.extensionId as string,
        key: key as string,
      };
    }

    it('answers a path with an empty id 404 not_found, never the list beside it (GET /tenants/ is not GET /tenants)', async () => {
      for (const path of ['/tenants/', '/clients/', '/accounts/', '/extensions/']) {
        const res = await fetch(`${system.pdpUrl}/admin/v1${path}`, {
          headers: { authorization: `Bearer ${system.adminToken}` },
        });
        expect([path, res.status, ((await res.json()) as { error?: string }).error]).toEqual([path, 404, 'not_found']);
      }
      expect((await admin.call('GET', '/tenants')).status).toBe(200);
    });

    it('reads one tenant, client, account and extension (with schemas) and the catalogue, each single object with an ETag and never a secret', async () => {
      const t = await furnished();
      const tenant = await admin.checked('getTenant', 'GET', `/tenants/${t.tenantId}`);
      expect(tenant.body).toMatchObject({
        tenantId: t.tenantId,
        displayName: t.tenantName,
        plan: 'L2',
        status: 'active',
      });
      const client = await admin.checked('getClient', 'GET', `/clients/${t.clientId}`);
      expect(client.body).toMatchObject({ clientId: t.clientId, tenantId: t.tenantId, type: 'confidential' });
      // Neither the secret nor its stored form; tokenEndpointAuthMethod names the method (client_secret_basic) only.
      expect(client.body).not.toHaveProperty('clientSecret');
      expect(JSON.stringify(client.body)).not.toContain(t.clientSecret!);
      expect(JSON.stringify(client.body)).not.toMatch(/sha256\$|scrypt\$/);
      const sa = await admin.checked('getAccount', 'GET', `/accounts/${t.serviceAccountId}`);
      expect(sa.body).toMatchObject({ kind: 'service', name: 'Worker', capabilities: ['svc.person.read'] });
      const login = await admin.checked('getAccount', 'GET', `/accounts/${t.accountId}`);
      expect(login.body).toEqual({
        accountId: t.accountId,
        kind: 'person',
        status: 'active',
        epoch: 1,
        tenantId: t.tenantId,
        personId: t.personId,
      });
      const ext = await admin.checked('getExtension', 'GET', `/extensions/${t.extensionId}`);
      expect(ext.body).toEqual({
        extensionId: t.extensionId,
        clientId: t.clientId,
        tenantId: t.tenantId,
        name: 'prefs',
        schemaVersions: [1],
        schemas: { '1': { type: 'object' } },
      });
      const listed = await admin.checked('listExtensions', 'GET', `/tenants/${t.tenantId}/extensions`);
      expect(listed.body).toEqual({
        items: [{ extensionId: t.extensionId, clientId: t.clientId, name: 'prefs', schemaVersions: [1] }],
        nextCursor: null,
      });
      for (const res of [tenant, client, sa, login, ext]) expect(res.headers.get('etag')).toMatch(/^"[^"]+"$/);
      const catalogue = await admin.checked('listCapabilities', 'GET', '/capabilities');
      expect(catalogue.body.items).toContainEqual({
        id: 'svc.person.read',
        description: expect.any(String),
        resourceType: 'person',
        minPlan: 'L2',
        availability: 'preview',
        catalogueVersion: '1.0.0-draft',
        enabled: true,
      });
      for (const unknown of [
        '/tenants/ten_00000000000000000000000000',
        '/clients/tp_none_none',
        '/accounts/acc_x',
        '/extensions/ext_x',
      ])
        expect((await admin.call('GET', unknown)).body.error).toBe('not_found');
    });

    it("lets a tenant admin key read its own tenant's objects and the catalogue, and refuses another tenant's as every admin route does (403 forbidden)", async () => {
      const mine = await furnished();
      const other = await furnished();
      const key = adminClient(system, mine.key);
      for (const path of [
        `/tenants/${mine.tenantId}`,
        `/clients/${mine.clientId}`,
        `/accounts/${mine.serviceAccountId}`,
        `/extensions/${mine.extensionId}`,
        `/tenants/${mine.tenantId}/extensions`,
        '/capabilities',
      ])
        expect({ path, status: (await key.call('GET', path)).status }).toEqual({ path, status: 200 });
      for (const path of [
        `/tenants/${other.tenantId}`,
        `/clients/${other.clientId}`,
        `/accounts/${other.serviceAccountId}`,
        `/extensions/${other.extensionId}`,
        `/tenants/${other.tenantId}/extensions`,
      ]) {
        const res = await key.call('GET', path);
        expect({ path, status: res.status, error: res.body.error }).toEqual({ path, status: 403, error: 'forbidden' });
      }
    });

    it('answers each PATCH and PUT whose If-Match is stale with 412 revision_conflict and changes nothing; the current ETag (or none) goes through', async () => {
      const t = await furnished();
      const ifMatch = async (method: string, path: string, body: unknown, etag: string) => {
        const res = await fetch(`${system.pdpUrl}/admin/v1${path}`, {
          method,
          headers: {
            authorization: `Bearer ${system.adminToken}`,
            'content-type': 'application/json',
            'if-match': etag,
          },
          body: JSON.stringify(body),
        });
        return { status: res.status, etag: res.headers.get('etag'), body: await res.json() };
      };
      const cases: [string, string, string, unknown, string][] = [
        ['PATCH', `/tenants/${t.tenantId}`, `/tenants/${t.tenantId}`, { displayName: 'Renamed' }, 'updateTenant'],
        ['PATCH', `/clients/${t.clientId}`, `/clients/${t.clientId}`, { name: 'Renamed' }, 'updateClient'],
        [
          'PUT',
          `/tenants/${t.tenantId}/grants/${t.clientId}`,
          `/tenants/${t.tenantId}/grants/${t.clientId}`,
          { capabilities: ['svc.person.read'] },
          'putGrant',
        ],
        [
          'PATCH',
          `/accounts/${t.serviceAccountId}`,
          `/accounts/${t.serviceAccountId}`,
          { name: 'Renamed' },
          'updateAccount',
        ],
        [
          'PUT',
          `/extensions/${t.extensionId}/schemas/2`,
          `/extensions/${t.extensionId}`,
          { type: 'object' },
          'putExtensionSchema',
        ],
      ];
      for (const [method, path, readPath, body, operationId] of cases) {
        const read = await admin.call('GET', readPath);
        const etag = read.headers.get('etag')!;
        const audited = (await admin.ok('GET', `/tenants/${t.tenantId}/audit?limit=100`)).items.length;
        const stale = await ifMatch(method, path, body, '"stale"');
        expect({ operationId, status: stale.status, error: stale.body.error }).toEqual({
          operationId,
          status: 412,
          error: 'revision_conflict',
        });
        expect((await admin.call('GET', readPath)).body).toEqual(read.body);
        expect((await admin.ok('GET', `/tenants/${t.tenantId}/audit?limit=100`)).items).toHaveLength(audited);
        const current = await ifMatch(method, path, body, etag);
        expect({ operationId, status: current.status }).toEqual({ operationId, status: 200 });
        // The answer's ETag is the changed object's, as a GET now shows it; the old one is stale from now on.
        expect(current.etag).toBe((await admin.call('GET', readPath)).headers.get('etag'));
        expect(current.etag).not.toBe(etag);
        expect((await ifMatch(method, path, body, etag)).status).toBe(412);
      }
      const capability = await ifMatch('PATCH', '/capabilities/svc.person.read', { enabled: true }, '"stale"');
      expect(capability.status).toBe(412);
    });

    it('changes as before for a caller that sends no If-Match, even after others changed the object', async () => {
      const t = await furnished();
      await admin.ok('PATCH', `/clients/${t.clientId}`, { name: 'First' });
      const res = await admin.checked('updateClient', 'PATCH', `/clients/${t.clientId}`, { name: 'Second' });
      expect(res.status).toBe(200);
      expect(res.body.name).toBe('Second');
      const sa = await admin.checked('updateAccount', 'PATCH', `/accounts/${t.serviceAccountId}`, {
        status: 'disabled',
        capabilities: ['svc.profile.self.read'],
      });
      expect(sa.body).toMatchObject({ status: 'disabled', capabilities: ['svc.profile.self.read'] });
      const person = await admin.call('PATCH', `/accounts/${t.accountId}`, { name: 'x' });
      expect({ status: person.status, error: person.body.error }).toEqual({ status: 422, error: 'schema_invalid' });
    });
  });
});
