// Cross-tenant isolation: every operation of the public API and of the admin API, called with tenant A's
// credentials (A's access token; A's tenant admin key) on tenant B's resources. The matrix is keyed by the documents'
// operationIds and its paths are the documents' own templates filled with B's ids, so an operation added to a
// document without a row here fails the first test. Every answer is held to its document; no refused request
// changes any record (all domain tables are read back after each); reads that A is refused succeed for B itself,
// so the refusal is the tenant boundary and not a malformed request.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import type { System } from '../../infra/system.js';
import { startProbingSystem } from '../support/system.js';
import { domainDigest } from '../support/database.js';
import { adminClient, setupMachineClient, type MachineClientSetup } from '../support/admin.js';
import { clientCredentialsToken } from '../support/oauth.js';
import { registerExtension } from '../support/extensions.js';
import { assertResponseMatches, operationsOf, type DocName } from '../support/openapi.js';
import { CAPABILITIES } from '../../wire/decision.js';

describe('tenant-isolation', () => {
  interface Side extends MachineClientSetup {
    token: string;
    adminKey: string;
    adminKeyId: string;
    extensionId: string;
    etag: string;
  }

  let system: System;
  let a: Side;
  let b: Side;

  async function side(): Promise<Side> {
    const admin = adminClient(system);
    const tenant = await setupMachineClient(admin, { grant: CAPABILITIES });
    const token = await clientCredentialsToken(system.authUrl, tenant, CAPABILITIES.join(' '));
    const extensionId = await registerExtension(admin, tenant.clientId);
    const key = await admin.ok('POST', `/tenants/${tenant.tenantId}/admin-keys`);
    const put = await fetch(`${system.baseUrl}/persons/${tenant.personId}/extensions/${extensionId}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'if-none-match': '*', 'content-type': 'application/json' },
      body: '{"schemaVersion":1,"data":{"note":"mine"}}',
    });
    if (put.status !== 201) throw new Error(`record: ${put.status}`);
    return { ...tenant, token, adminKey: key.key, adminKeyId: key.keyId, extensionId, etag: put.headers.get('etag')! };
  }

  beforeAll(async () => {
    system = await startProbingSystem({ ISSUER_ENABLE_CLIENT_CREDENTIALS: 'true' });
    [a, b] = [await side(), await side()];
  }, 120_000);
  afterAll(async () => {
    await system?.close();
  });

  /**
   * One request of a row: path parameters default to B's ids by name; `expect` is [status, error] or a check of a 2xx
   * answer.
   */
  interface Probe {
    name: string;
    params?: Record<string, string>;
    body?: unknown;
    headers?: Record<string, string>;
    expect: [number, string] | ((body: Record<string, unknown>) => void);
    /** A read refused to A that B's own credentials must be allowed (so the refusal is the tenant boundary). */
    control?: true;
  }

  const theirs = (): Record<string, string> => ({
    tenantId: b.tenantId,
    personId: b.personId,
    clientId: b.clientId,
    accountId: b.serviceAccountId,
    extensionId: b.extensionId,
    keyId: b.adminKeyId,
    version: '1',
    capability: 'svc.person.read',
  });
  const NOT_FOUND: [number, string] = [404, 'not_found'];
  const FORBIDDEN: [number, string] = [403, 'forbidden'];
  /** An answer about A that names nothing of B. */
  const onlyA = (body: Record<string, unknown>) => {
    const text = JSON.stringify(body);
    for (const id of [b.tenantId, b.clientId, b.personId, b.serviceAccountId, b.extensionId])
      expect(text).not.toContain(id);
  };

  const MATRIX: Record<string, Probe[]> = {
    // Public API, A's access token.
    'public getOpenApiDocument': [{ name: 'serves the document, no tenant data', expect: onlyA }],
    'public getApiGuide': [{ name: 'serves the guide, no tenant data', expect: onlyA }],
    'public getMe': [
      { name: "answers A's own identity", expect: (body) => (onlyA(body), expect(body.tenantId).toBe(a.tenantId)) },
    ],
    'public getTenant': [
      { name: "answers A's own tenant", expect: (body) => (onlyA(body), expect(body.tenantId).toBe(a.tenantId)) },
    ],
    'public getPerson': [{ name: "B's person", expect: NOT_FOUND, control: true }],
    'public listPersonExtensions': [{ name: "B's person", expect: NOT_FOUND, control: true }],
    'public getPersonExtension': [
      { name: "B's record", expect: NOT_FOUND, control: true },
      { name: "B's extension on A's person", params: { personId: 'A' }, expect: NOT_FOUND },
    ],
    'public putPersonExtension': [
      {
        name: "create on B's person",
        headers: { 'if-none-match': '*' },
        body: { schemaVersion: 1, data: { note: 'A' } },
        expect: NOT_FOUND,
      },
      {
        name: "update B's record with its ETag",
        headers: { 'if-match': 'B-ETAG' },
        body: { schemaVersion: 1, data: { note: 'A' } },
        expect: NOT_FOUND,
      },
      {
        name: "B's extension on A's person",
        params: { personId: 'A' },
        headers: { 'if-none-match': '*' },
        body: { schemaVersion: 1, data: {} },
        expect: NOT_FOUND,
      },
    ],
    'public deletePersonExtension': [
      { name: "B's record", headers: { 'if-match': '*' }, expect: NOT_FOUND },
      {
        name: "B's extension on A's person",
        params: { personId: 'A' },
        headers: { 'if-match': '*' },
        expect: NOT_FOUND,
      },
    ],
    // Admin API, A's tenant admin key.
    'admin createTenant': [
      { name: 'operator only', body: { label: 'intruder', displayName: 'Intruder', plan: 'L2' }, expect: FORBIDDEN },
    ],
    'admin listTenants': [{ name: 'operator only', expect: FORBIDDEN }],
    'admin listPersons': [{ name: "B's persons", expect: FORBIDDEN, control: true }],
    'admin listClients': [{ name: "B's clients", expect: FORBIDDEN, control: true }],
    'admin getTenant': [{ name: "B's tenant", expect: FORBIDDEN, control: true }],
    'admin getClient': [{ name: "B's app", expect: FORBIDDEN, control: true }],
    'admin getAccount': [{ name: "B's service account", expect: FORBIDDEN, control: true }],
    'admin listExtensions': [{ name: "B's extensions", expect: FORBIDDEN, control: true }],
    'admin getExtension': [{ name: "B's extension", expect: FORBIDDEN, control: true }],
    'admin listCapabilities': [{ name: 'the catalogue, no tenant data', expect: onlyA }],
    'admin listServiceAccounts': [{ name: "B's service accounts", expect: FORBIDDEN, control: true }],
    'admin listTenantAdminKeys': [{ name: 'operator only', expect: FORBIDDEN }],
    'admin updateTenant': [
      { name: "B's display name", body: { displayName: 'Taken over' }, expect: FORBIDDEN },
      { name: "B's status", body: { status: 'suspended' }, expect: FORBIDDEN },
    ],
    'admin createTenantAdminKey': [{ name: 'a key for B', expect: FORBIDDEN }],
    'admin revokeTenantAdminKey': [{ name: "B's key", expect: FORBIDDEN }],
    'admin createPerson': [
      {
        name: 'a person in B',
        body: { displayName: 'Mole', username: 'mole-in-b', password: 'correct horse battery' },
        expect: FORBIDDEN,
      },
    ],
    'admin endPersonRelationship': [
      { name: "B's relationship", expect: FORBIDDEN },
      { name: "B's person under A's tenant", params: { tenantId: 'A' }, expect: NOT_FOUND },
    ],
    'admin createClient': [
      {
        name: 'a client in B',
        body: {
          slug: 'mole',
          name: 'Mole',
          kind: 'third_party',
          type: 'public',
          redirectUris: ['https://mole.example/cb'],
        },
        expect: FORBIDDEN,
      },
    ],
    'admin updateClient': [{ name: "disable B's client", body: { status: 'disabled' }, expect: FORBIDDEN }],
    'admin deleteClient': [{ name: "delete B's client", expect: FORBIDDEN }],
    'admin createClientSecret': [{ name: "a secret of B's client", expect: FORBIDDEN }],
    'admin promoteClientSecret': [{ name: "B's client", expect: FORBIDDEN }],
    'admin getGrant': [
      { name: "B's grant", expect: FORBIDDEN, control: true },
      { name: "B's client under A's tenant", params: { tenantId: 'A' }, expect: NOT_FOUND },
    ],
    'admin putGrant': [
      { name: "B's grant", body: { capabilities: ['svc.profile.self.read'] }, expect: FORBIDDEN },
      {
        name: "B's client under A's tenant",
        params: { tenantId: 'A' },
        body: { capabilities: ['svc.profile.self.read'] },
        expect: NOT_FOUND,
      },
    ],
    'admin deleteGrant': [{ name: "B's grant", expect: FORBIDDEN }],
    'admin createServiceAccount': [
      {
        name: 'in B',
        body: { clientId: 'B-CLIENT', name: 'mole', capabilities: ['svc.profile.self.read'] },
        expect: FORBIDDEN,
      },
      {
        name: "for B's client in A",
        params: { tenantId: 'A' },
        body: { clientId: 'B-CLIENT', name: 'mole', capabilities: ['svc.profile.self.read'] },
        expect: NOT_FOUND,
      },
    ],
    'admin updateAccount': [
      { name: "disable B's service account", body: { status: 'disabled' }, expect: FORBIDDEN },
      {
        name: "disable B's person's login",
        params: { accountId: 'B-PERSON-ACCOUNT' },
        body: { status: 'disabled' },
        expect: FORBIDDEN,
      },
    ],
    'admin advanceAccountEpoch': [{ name: "B's service account", expect: FORBIDDEN }],
    'admin revokeAccountSessions': [
      { name: "B's person's login", params: { accountId: 'B-PERSON-ACCOUNT' }, expect: FORBIDDEN },
    ],
    'admin createExtension': [
      { name: "for B's client", body: { name: 'mole', schemas: { 1: { type: 'object' } } }, expect: FORBIDDEN },
    ],
    'admin putExtensionSchema': [
      { name: "a version of B's extension", params: { version: '2' }, body: { type: 'object' }, expect: FORBIDDEN },
    ],
    'admin updateCapability': [{ name: 'operator only', body: { enabled: false }, expect: FORBIDDEN }],
    'admin listDecisions': [{ name: "B's decisions", expect: FORBIDDEN, control: true }],
    'admin getUsage': [{ name: "B's usage", expect: FORBIDDEN, control: true }],
    'admin exportRecords': [{ name: "B's records", expect: FORBIDDEN, control: true }],
    'admin exportTenant': [{ name: "B's whole tenant", expect: FORBIDDEN, control: true }],
    'admin listTenantAudit': [{ name: "B's audit trail", expect: FORBIDDEN, control: true }],
    'admin verifyTenantAudit': [{ name: "B's audit entries", expect: FORBIDDEN, control: true }],
    'admin listAudit': [{ name: 'operator only', expect: FORBIDDEN }],
    'admin verifyAudit': [{ name: 'operator only', expect: FORBIDDEN }],
  };
  const DOCS: DocName[] = ['public', 'admin'];

  /** Placeholders a probe may use for values known only once the tenants exist. */
  function resolve(value: string): string {
    return (
      (
        { 'B-ETAG': b.etag, 'B-PERSON-ACCOUNT': b.accountId, 'B-CLIENT': b.clientId } as Record<
          string,
          string | undefined
        >
      )[value] ?? value
    );
  }

  async function send(doc: DocName, operationId: string, probe: Probe, as: Side) {
    const op = operationsOf(doc).find((o) => o.operationId === operationId)!;
    const ids = { ...theirs(), ...probe.params };
    const ofA: Record<string, string> = { tenantId: a.tenantId, personId: a.personId };
    const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) =>
      encodeURIComponent(ids[name] === 'A' ? ofA[name]! : resolve(ids[name]!)),
    );
    const body =
      probe.body === undefined
        ? undefined
        : JSON.stringify(probe.body, (_k, v) => (typeof v === 'string' ? resolve(v) : v));
    const headers: Record<string, string> = Object.fromEntries(
      Object.entries(probe.headers ?? {}).map(([k, v]) => [k, resolve(v)]),
    );
    const base = doc === 'public' ? system.baseUrl : `${system.pdpUrl}/admin/v1`;
    const res = await fetch(`${base}${path}`, {
      method: op.method.toUpperCase(),
      headers: {
        authorization: `Bearer ${doc === 'public' ? as.token : as.adminKey}`,
        ...headers,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      body,
    });
    const text = await res.text();
    const parsed = assertResponseMatches(doc, operationId, {
      status: res.status,
      headers: res.headers,
      body: text,
    }) as Record<string, unknown>;
    return { status: res.status, body: parsed ?? {}, path };
  }

  describe("tenant A's credentials on tenant B's resources", () => {
    it('has a row for every operation of the public and admin documents, and none for an operation they lack', () => {
      const operations = DOCS.flatMap((doc) => operationsOf(doc).map((op) => `${doc} ${op.operationId}`)).sort();
      expect(Object.keys(MATRIX).sort()).toEqual(operations);
    });

    for (const [key, probes] of Object.entries(MATRIX)) {
      const [doc, operationId] = key.split(' ') as [DocName, string];
      it.each(probes.map((p) => [p.name, p] as const))(`${key}: %s`, async (_name, probe) => {
        const before = await domainDigest(system.db);
        const answer = await send(doc, operationId, probe, a);
        if (typeof probe.expect === 'function') {
          expect(answer.status).toBe(200);
          probe.expect(answer.body);
        } else {
          expect([answer.status, answer.body.error]).toEqual(probe.expect);
        }
        expect(await domainDigest(system.db)).toBe(before);
        if (probe.control) expect((await send(doc, operationId, probe, b)).status).toBe(200);
      });
    }
  });
});
