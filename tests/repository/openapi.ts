// The OpenAPI documents against the contract (third-party-api-v1.md, platform-interfaces.md), and the response
// validator in tests/support/openapi.ts against good and bad responses.
import { describe, it, expect } from '@jest/globals';
import {
  assertRequestMatches,
  assertResponseMatches,
  assertSchema,
  declaredResponse,
  findOperation,
  isObject,
  loadApiDocuments,
  locate,
  operationsOf,
  pointerOf,
  publicApiDocument,
  schemaProblems,
  type DocName,
} from '../support/openapi.js';

describe('openapi', () => {
  // ---- The contract's vocabulary, copied from the contract text (not from code), so either side drifting fails.

  const CONTRACT_ERROR_CODES = [
    'invalid_token',
    'client_unknown',
    'client_disabled',
    'actor_unknown',
    'tenant_suspended',
    'client_not_third_party',
    'profile_not_supported',
    'subject_revoked',
    'epoch_changed',
    'capability_not_granted',
    'plan_capability_excluded',
    'capability_not_in_token',
    'capability_unavailable',
    'resource_type_mismatch',
    'tenant_mismatch',
    'no_relationship',
    'forbidden',
    'not_found',
    'revision_conflict',
    'already_exists',
    'precondition_required',
    'payload_too_large',
    'quota_exceeded',
    'schema_invalid',
    'rate_limited',
    'authorization_unavailable',
    'token_verification_unavailable',
  ];
  const CONTRACT_DENY_CODES = [
    'client_unknown',
    'client_disabled',
    'actor_unknown',
    'tenant_suspended',
    'client_not_third_party',
    'profile_not_supported',
    'subject_revoked',
    'epoch_changed',
    'capability_not_granted',
    'plan_capability_excluded',
    'capability_not_in_token',
    'capability_unavailable',
    'resource_type_mismatch',
    'tenant_mismatch',
    'no_relationship',
    'forbidden',
  ];
  const TOKEN_ERROR_CODES = ['invalid_client', 'invalid_grant', 'invalid_scope', 'unsupported_grant_type'];
  const CAPABILITIES = [
    'svc.profile.self.read',
    'svc.tenant.info.read',
    'svc.person.read',
    'svc.person.metadata.read',
    'svc.person.metadata.write',
  ];
  /** Contract section 4: operationId -> method, path relative to {base_url}, capability, declared statuses. */
  const PUBLIC_OPERATIONS: Record<string, { method: string; path: string; capability: string; statuses: string[] }> = {
    getMe: {
      method: 'get',
      path: '/me',
      capability: 'svc.profile.self.read',
      statuses: ['200', '401', '403', '429', '503'],
    },
    getTenant: {
      method: 'get',
      path: '/tenant',
      capability: 'svc.tenant.info.read',
      statuses: ['200', '401', '403', '429', '503'],
    },
    getPerson: {
      method: 'get',
      path: '/persons/{personId}',
      capability: 'svc.person.read',
      statuses: ['200', '401', '403', '404', '429', '503'],
    },
    listPersonExtensions: {
      method: 'get',
      path: '/persons/{personId}/extensions',
      capability: 'svc.person.metadata.read',
      statuses: ['200', '401', '403', '404', '422', '429', '503'],
    },
    getPersonExtension: {
      method: 'get',
      path: '/persons/{personId}/extensions/{extensionId}',
      capability: 'svc.person.metadata.read',
      statuses: ['200', '401', '403', '404', '429', '503'],
    },
    putPersonExtension: {
      method: 'put',
      path: '/persons/{personId}/extensions/{extensionId}',
      capability: 'svc.person.metadata.write',
      statuses: ['200', '201', '401', '403', '404', '409', '413', '422', '428', '429', '503'],
    },
    deletePersonExtension: {
      method: 'delete',
      path: '/persons/{personId}/extensions/{extensionId}',
      capability: 'svc.person.metadata.write',
      statuses: ['204', '401', '403', '404', '409', '428', '429', '503'],
    },
  };
  const ADMIN_OPERATIONS: Record<string, [string, string]> = {
    createTenant: ['post', '/tenants'],
    listTenants: ['get', '/tenants'],
    listPersons: ['get', '/tenants/{tenantId}/persons'],
    listClients: ['get', '/tenants/{tenantId}/clients'],
    listServiceAccounts: ['get', '/tenants/{tenantId}/service-accounts'],
    listTenantAdminKeys: ['get', '/tenants/{tenantId}/admin-keys'],
    updateTenant: ['patch', '/tenants/{tenantId}'],
    getTenant: ['get', '/tenants/{tenantId}'],
    getClient: ['get', '/clients/{clientId}'],
    getAccount: ['get', '/accounts/{accountId}'],
    listExtensions: ['get', '/tenants/{tenantId}/extensions'],
    getExtension: ['get', '/extensions/{extensionId}'],
    listCapabilities: ['get', '/capabilities'],
    createTenantAdminKey: ['post', '/tenants/{tenantId}/admin-keys'],
    revokeTenantAdminKey: ['delete', '/tenants/{tenantId}/admin-keys/{keyId}'],
    createPerson: ['post', '/tenants/{tenantId}/persons'],
    endPersonRelationship: ['delete', '/tenants/{tenantId}/persons/{personId}'],
    createClient: ['post', '/tenants/{tenantId}/clients'],
    updateClient: ['patch', '/clients/{clientId}'],
    deleteClient: ['delete', '/clients/{clientId}'],
    createClientSecret: ['post', '/clients/{clientId}/secrets'],
    promoteClientSecret: ['post', '/clients/{clientId}/secrets/promote'],
    putGrant: ['put', '/tenants/{tenantId}/grants/{clientId}'],
    getGrant: ['get', '/tenants/{tenantId}/grants/{clientId}'],
    deleteGrant: ['delete', '/tenants/{tenantId}/grants/{clientId}'],
    createServiceAccount: ['post', '/tenants/{tenantId}/service-accounts'],
    updateAccount: ['patch', '/accounts/{accountId}'],
    advanceAccountEpoch: ['post', '/accounts/{accountId}/epoch'],
    revokeAccountSessions: ['post', '/accounts/{accountId}/sessions/revoke'],
    createExtension: ['post', '/clients/{clientId}/extensions'],
    putExtensionSchema: ['put', '/extensions/{extensionId}/schemas/{version}'],
    updateCapability: ['patch', '/capabilities/{capability}'],
    listDecisions: ['get', '/tenants/{tenantId}/decisions'],
    getUsage: ['get', '/tenants/{tenantId}/usage'],
    exportRecords: ['get', '/tenants/{tenantId}/export'],
    exportTenant: ['get', '/tenants/{tenantId}/export/tenant'],
    listTenantAudit: ['get', '/tenants/{tenantId}/audit'],
    listAudit: ['get', '/audit'],
    verifyAudit: ['get', '/audit/verify'],
    verifyTenantAudit: ['get', '/tenants/{tenantId}/audit/verify'],
  };
  const DOCS: DocName[] = ['public', 'token', 'admin'];

  // ---- Small helpers over the parsed documents

  const at = (doc: DocName, ...tokens: string[]): unknown => locate(doc, pointerOf(...tokens)).node;
  const obj = (v: unknown): Record<string, unknown> => {
    if (!isObject(v)) throw new Error(`expected an object, got ${JSON.stringify(v)}`);
    return v;
  };
  const schema = (doc: DocName, name: string) => obj(at(doc, 'components', 'schemas', name));

  function responsesOf(
    doc: DocName,
    operationId: string,
  ): [string, Record<string, unknown>, { doc: DocName; pointer: string }][] {
    const op = findOperation(doc, operationId);
    return Object.keys(obj(op.operation.responses)).map((status) => {
      const loc = locate(doc, `${op.pointer}/responses/${status}`);
      return [status, obj(loc.node), { doc: loc.doc, pointer: loc.pointer }];
    });
  }

  function headerOf(response: { doc: DocName; pointer: string }, name: string): Record<string, unknown> | undefined {
    const node = obj(locate(response.doc, response.pointer).node);
    if (!isObject(node.headers) || !(name in node.headers)) return undefined;
    return obj(locate(response.doc, `${response.pointer}${pointerOf('headers', name)}`).node);
  }

  function allRefs(node: unknown, out: string[] = []): string[] {
    if (Array.isArray(node)) node.forEach((n) => allRefs(n, out));
    else if (isObject(node)) {
      for (const [k, v] of Object.entries(node)) {
        if (k === '$ref' && typeof v === 'string') out.push(v);
        else allRefs(v, out);
      }
    }
    return out;
  }

  interface ExampleCase {
    label: string;
    doc: DocName;
    schemaPointer: string;
    value: unknown;
  }

  /**
   * Every example in a document: Example objects and `example` on media types, parameters and headers (checked
   * against their `schema`), and JSON Schema `examples` arrays (checked against the schema that holds them).
   */
  function examplesOf(doc: DocName): ExampleCase[] {
    const out: ExampleCase[] = [];
    const walk = (node: unknown, pointer: string) => {
      if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${pointer}/${i}`));
      if (!isObject(node)) return;
      if (Array.isArray(node.examples)) {
        node.examples.forEach((value, i) =>
          out.push({ label: `${doc}#${pointer}/examples/${i}`, doc, schemaPointer: pointer, value }),
        );
      }
      if ('schema' in node && isObject(node.examples)) {
        for (const name of Object.keys(node.examples)) {
          const example = locate(doc, `${pointer}${pointerOf('examples', name)}`);
          out.push({
            label: `${doc}#${pointer}/examples/${name}`,
            doc,
            schemaPointer: `${pointer}/schema`,
            value: obj(example.node).value,
          });
        }
      }
      if ('schema' in node && 'example' in node) {
        out.push({ label: `${doc}#${pointer}/example`, doc, schemaPointer: `${pointer}/schema`, value: node.example });
      }
      for (const [key, child] of Object.entries(node)) {
        if (key === 'example' || key === 'examples') continue;
        walk(
          child,
          pointerOf(
            ...pointer
              .split('/')
              .slice(1)
              .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~')),
            key,
          ),
        );
      }
    };
    walk(loadApiDocuments()[doc], '');
    return out;
  }

  /** A response assembled from a document's own examples: declared headers' examples, the media type, the body. */
  function syntheticResponse(
    response: { doc: DocName; pointer: string },
    node: Record<string, unknown>,
    mediaType?: string,
    body?: unknown,
  ): { status: number; headers: Record<string, string>; body: unknown } {
    const headers: Record<string, string> = {};
    for (const name of Object.keys(isObject(node.headers) ? node.headers : {})) {
      const header = headerOf(response, name);
      if (header && header.example !== undefined) headers[name] = String(header.example);
    }
    if (mediaType)
      headers['content-type'] = mediaType === 'application/json' ? 'application/json; charset=utf-8' : mediaType;
    if (isObject(body) && typeof body.etag === 'string') headers.etag = body.etag;
    if (isObject(body) && typeof body.requestId === 'string') headers['x-request-id'] = body.requestId;
    return { status: 0, headers, body };
  }

  // ---- Fixtures for the validator tests

  const RID = '7f3c2a1e-9b4d-4c8e-a2f1-0d5e6b7c8a9f';
  const ME = {
    subjectType: 'person',
    subjectId: 'psn_01hq3v5k8m9n2p4r6s7t8v9w0x',
    tenantId: 'ten_01hq3v5k8m9n2p4r6s7t8v9w0y',
    clientId: 'tp_acme_loyalty-app',
    scopes: ['svc.profile.self.read'],
    actor: { accountId: 'acc_01hq3v5k8m9n2p4r6s7t8v9w0z' },
  };
  const okHeaders = {
    'x-request-id': RID,
    'x-ratelimit-remaining': '10',
    'content-type': 'application/json; charset=utf-8',
  };
  const problemHeaders = { 'x-request-id': RID, 'content-type': 'application/problem+json' };
  const RECORD = {
    extensionId: 'loyalty_profile',
    personId: 'psn_01hq3v5k8m9n2p4r6s7t8v9w0x',
    schemaVersion: 1,
    etag: '"r1-3f2a9c"',
    data: { tier: 'gold' },
    createdAt: '2026-03-05T12:00:00Z',
    updatedAt: '2026-03-05T12:00:00Z',
    updatedBy: 'tp_acme_loyalty-app',
  };

  // =================================================================================================================

  describe('OpenAPI documents follow the contract', () => {
    it('loads three OpenAPI 3.1 documents, versioned 1.0.0-draft', () => {
      const docs = loadApiDocuments();
      for (const doc of DOCS) {
        expect(docs[doc].openapi).toBe('3.1.0');
        expect(obj(docs[doc].info).version).toBe('1.0.0-draft');
      }
    });

    it('public: the seven contract operations with their methods, paths, capabilities and statuses', () => {
      const ops = operationsOf('public');
      for (const [operationId, expected] of Object.entries(PUBLIC_OPERATIONS)) {
        const op = ops.find((o) => o.operationId === operationId);
        expect(op).toBeDefined();
        expect([op?.method, op?.path]).toEqual([expected.method, expected.path]);
        expect(op?.operation.security).toEqual([{ bearerAuth: [], oauth2: [expected.capability] }]);
        expect(Object.keys(obj(op?.operation.responses)).sort()).toEqual([...expected.statuses].sort());
      }
      expect(ops.map((o) => o.operationId).sort()).toEqual(
        [...Object.keys(PUBLIC_OPERATIONS), 'getOpenApiDocument', 'getApiGuide'].sort(),
      );
    });

    it('public: GET /openapi.json needs no token and answers 200 application/json', () => {
      const op = findOperation('public', 'getOpenApiDocument');
      expect([op.method, op.path]).toEqual(['get', '/openapi.json']);
      expect(op.operation.security).toEqual([]);
      expect(Object.keys(obj(obj(obj(op.operation.responses)['200']).content))).toEqual(['application/json']);
    });

    it('public: server is {base_url} defaulting to http://127.0.0.1:8080/v1 (which includes /v1)', () => {
      const servers = publicApiDocument().servers as { url: string; variables: Record<string, { default: string }> }[];
      expect(servers).toHaveLength(1);
      expect(servers[0]?.url).toBe('{base_url}');
      expect(servers[0]?.variables.base_url?.default).toBe('http://127.0.0.1:8080/v1');
      for (const op of operationsOf('public')) expect(op.path.startsWith('/v1')).toBe(false);
    });

    it('public: is self-contained (servable as one JSON), and publicApiDocument() returns an independent copy', () => {
      const doc = publicApiDocument();
      expect(allRefs(doc).filter((r) => !r.startsWith('#/'))).toEqual([]);
      expect(() => JSON.parse(JSON.stringify(doc)) as unknown).not.toThrow();
      (doc.info as Record<string, unknown>).title = 'changed';
      expect(obj(publicApiDocument().info).title).not.toBe('changed');
    });

    it('token: issueToken is POST /oauth2/token on the issuer; JWKS and discovery are documented', () => {
      const issue = findOperation('token', 'issueToken');
      expect([issue.method, issue.path]).toEqual(['post', '/oauth2/token']);
      expect(Object.keys(obj(issue.operation.responses)).sort()).toEqual(['200', '400', '401', '429']);
      expect([findOperation('token', 'getJwks').path, findOperation('token', 'getDiscovery').path]).toEqual([
        '/.well-known/jwks.json',
        '/.well-known/openid-configuration',
      ]);
      const server = (loadApiDocuments().token.servers as { variables: Record<string, { default: string }> }[])[0];
      expect(server?.variables.auth_url?.default).toBe('http://127.0.0.1:3000');
    });

    it('token: the form is one of three grant shapes with the contract fields (and RFC 7523 client assertions), rejecting unlisted fields', () => {
      const body = obj(at('token', 'paths', '/oauth2/token', 'post', 'requestBody'));
      expect(Object.keys(obj(body.content))).toEqual(['application/x-www-form-urlencoded']);
      const request = schema('token', 'TokenRequest');
      expect(obj(request.discriminator).propertyName).toBe('grant_type');
      const shapes = (request.oneOf as { $ref: string }[]).map((r) => obj(locate('token', r.$ref.slice(1)).node));
      const summary = Object.fromEntries(
        shapes.map((s) => [
          obj(obj(s.properties).grant_type).const,
          { required: s.required, fields: Object.keys(obj(s.properties)).sort(), ap: s.additionalProperties },
        ]),
      );
      expect(summary).toEqual({
        client_credentials: {
          required: ['grant_type', 'client_id'],
          fields: ['client_assertion', 'client_assertion_type', 'client_id', 'client_secret', 'grant_type', 'scope'],
          ap: false,
        },
        authorization_code: {
          required: ['grant_type', 'client_id', 'code', 'code_verifier', 'redirect_uri'],
          fields: [
            'client_assertion',
            'client_assertion_type',
            'client_id',
            'client_secret',
            'code',
            'code_verifier',
            'grant_type',
            'redirect_uri',
          ],
          ap: false,
        },
        refresh_token: {
          required: ['grant_type', 'client_id', 'refresh_token'],
          fields: [
            'client_assertion',
            'client_assertion_type',
            'client_id',
            'client_secret',
            'grant_type',
            'refresh_token',
            'scope',
          ],
          ap: false,
        },
      });
      const verifier = obj(obj(schema('token', 'AuthorizationCodeGrant').properties).code_verifier);
      expect([verifier.minLength, verifier.maxLength, verifier.pattern]).toEqual([
        43,
        128,
        '^[A-Za-z0-9._~-]{43,128}$',
      ]);
      expect(findOperation('token', 'issueToken').operation.security).toEqual([{ clientSecretBasic: [] }, {}]);
    });

    it('token: TokenError enum is exactly the four contract codes; TokenResponse is closed, Bearer unless DPoP-bound', () => {
      expect(obj(obj(schema('token', 'TokenError').properties).error).enum).toEqual(TOKEN_ERROR_CODES);
      const response = schema('token', 'TokenResponse');
      expect(response.additionalProperties).toBe(false);
      expect(response.required).toEqual(['access_token', 'token_type', 'expires_in', 'scope']);
      expect(obj(obj(response.properties).token_type).enum).toEqual(['Bearer', 'DPoP']);
    });

    it('Problem.error is exactly the 27 codes of contract section 7.2; the 403 deny codes are section 7.3', () => {
      expect(schema('public', 'ErrorCode').enum).toEqual(CONTRACT_ERROR_CODES);
      expect(obj(obj(schema('public', 'Problem').properties).error).$ref).toBe('#/components/schemas/ErrorCode');
      expect(schema('public', 'Problem').required).toEqual(['error', 'requestId']);
      expect(schema('public', 'DenyCode').enum).toEqual(CONTRACT_DENY_CODES);
    });

    it(
      'the five capabilities are oauth2 scopes (authorization ' +
        'code and client credentials flows) and the Capability enum',
      () => {
        const flows = obj(obj(at('public', 'components', 'securitySchemes', 'oauth2')).flows);
        const code = obj(flows.authorizationCode);
        expect([code.authorizationUrl, code.tokenUrl, code.refreshUrl]).toEqual([
          'http://127.0.0.1:3000/oauth2/authorize',
          'http://127.0.0.1:3000/oauth2/token',
          'http://127.0.0.1:3000/oauth2/token',
        ]);
        expect(Object.keys(obj(code.scopes))).toEqual(CAPABILITIES);
        expect(Object.keys(obj(obj(flows.clientCredentials).scopes))).toEqual(CAPABILITIES);
        for (const description of Object.values(obj(code.scopes))) expect(typeof description).toBe('string');
        expect(schema('public', 'Capability').enum).toEqual(CAPABILITIES);
        expect(at('public', 'components', 'securitySchemes', 'bearerAuth')).toMatchObject({
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'at+jwt',
        });
      },
    );

    it('every response of the public and admin documents and the token endpoint requires x-request-id', () => {
      for (const doc of DOCS) {
        for (const op of operationsOf(doc)) {
          for (const [status, , loc] of responsesOf(doc, op.operationId)) {
            expect([doc, op.operationId, status, headerOf(loc, 'x-request-id')?.required]).toEqual([
              doc,
              op.operationId,
              status,
              true,
            ]);
          }
        }
      }
    });

    it(
      'public: 401 carries a Bearer www-authenticate, ' +
        '429/503 a retry-after >= 1, successful reads x-ratelimit-remaining',
      () => {
        for (const op of operationsOf('public')) {
          for (const [status, node, loc] of responsesOf('public', op.operationId)) {
            const label = `${op.operationId} ${status}`;
            if (status === '401') expect([label, headerOf(loc, 'www-authenticate')?.required]).toEqual([label, true]);
            if (status === '429' || status === '503') {
              const retry = locate(loc.doc, `${loc.pointer}${pointerOf('headers', 'retry-after')}`);
              expect([label, obj(retry.node).required, locate(retry.doc, `${retry.pointer}/schema`).node]).toEqual([
                label,
                true,
                { type: 'integer', minimum: 1 },
              ]);
            }
            // Documents served without a token (the OpenAPI document, the guide) are not API reads: no rate limit
            // applies.
            const tokenless = Array.isArray(op.operation.security) && op.operation.security.length === 0;
            if (status === '200' && op.method === 'get' && !tokenless) {
              expect([label, headerOf(loc, 'x-ratelimit-remaining')?.required]).toEqual([label, true]);
            }
            if (Number(status) >= 400)
              expect([label, Object.keys(obj(node.content))]).toEqual([label, ['application/problem+json']]);
          }
        }
        const putResponses = Object.fromEntries(
          responsesOf('public', 'putPersonExtension').map(([s, , loc]) => [s, loc]),
        );
        expect(headerOf(putResponses['201']!, 'location')?.required).toBe(true);
        expect(headerOf(putResponses['201']!, 'etag')?.required).toBe(true);
        expect(headerOf(putResponses['200']!, 'etag')?.required).toBe(true);
        expect(headerOf(putResponses['409']!, 'etag')?.required).toBe(true);
      },
    );

    it('public: precondition headers and query bounds follow the contract', () => {
      const params = (operationId: string) =>
        Object.fromEntries(
          ((findOperation('public', operationId).operation.parameters as unknown[]) ?? []).map((p) => {
            const param = obj(locate('public', (p as { $ref: string }).$ref.slice(1)).node);
            return [`${String(param.in)}:${String(param.name)}`, param];
          }),
        );
      const put = params('putPersonExtension');
      expect(obj(put['header:If-Match']?.schema).pattern).toBe('^"[^"]+"$');
      expect(obj(put['header:If-None-Match']?.schema).const).toBe('*');
      const del = params('deletePersonExtension');
      expect(del['header:If-Match']?.required).toBe(true);
      expect(obj(del['header:If-Match']?.schema).pattern).toBe('^(\\*|"[^"]+")$');
      const list = params('listPersonExtensions');
      expect(list['query:limit']?.schema).toEqual({ type: 'integer', minimum: 1, maximum: 100, default: 20 });
      expect(obj(list['query:cursor']?.schema).maxLength).toBe(512);
      const invalidQuery = declaredResponse('public', 'listPersonExtensions', 422);
      expect(JSON.stringify(invalidQuery?.node)).toContain('"const":"schema_invalid"');
    });

    it('public: every object schema except the free-form extension data is closed (additionalProperties: false)', () => {
      for (const [name, s] of Object.entries(obj(at('public', 'components', 'schemas')))) {
        if (obj(s).type !== 'object' || name === 'ExtensionData') continue;
        expect([name, obj(s).additionalProperties]).toEqual([name, false]);
      }
      expect(schema('public', 'PersonExtensionPage')).toMatchObject({ required: ['items', 'nextCursor'] });
      expect(obj(obj(schema('public', 'PersonExtensionPage').properties).items).maxItems).toBe(100);
    });

    it('admin: every platform-interfaces endpoint has its operationId, bearer auth and Problem errors', () => {
      const ops = operationsOf('admin');
      for (const [operationId, [method, path]] of Object.entries(ADMIN_OPERATIONS)) {
        const op = ops.find((o) => o.operationId === operationId);
        expect([operationId, op?.method, op?.path]).toEqual([operationId, method, path]);
        for (const [status, node] of responsesOf('admin', operationId)) {
          if (Number(status) >= 400)
            expect([operationId, status, Object.keys(obj(node.content))]).toEqual([
              operationId,
              status,
              ['application/problem+json'],
            ]);
        }
      }
      expect(ops).toHaveLength(Object.keys(ADMIN_OPERATIONS).length);
      expect(loadApiDocuments().admin.security).toEqual([{ adminBearer: [] }]);
      const server = (loadApiDocuments().admin.servers as { variables: Record<string, { default: string }> }[])[0];
      expect(server?.variables.admin_url?.default).toBe('http://127.0.0.1:8181/admin/v1');
    });

    it('admin: ids and labels use the agreed patterns', () => {
      expect(schema('public', 'TenantId').pattern).toBe('^ten_[0-9a-hjkmnp-tv-z]{26}$');
      expect(schema('public', 'PersonId').pattern).toBe('^psn_[0-9a-hjkmnp-tv-z]{26}$');
      expect(schema('public', 'AccountId').pattern).toBe('^acc_[0-9a-hjkmnp-tv-z]{26}$');
      expect(schema('public', 'ClientId').pattern).toBe('^tp_[a-z0-9]+(?:-[a-z0-9]+)*_[a-z0-9]+(?:-[a-z0-9]+)*$');
      expect(schema('admin', 'TenantLabel').pattern).toBe('^[a-z0-9]+(?:-[a-z0-9]+)*$');
      expect(schema('admin', 'ClientSlug').pattern).toBe('^[a-z0-9]+(?:-[a-z0-9]+)*$');
    });
  });

  describe('every example in the documents is valid', () => {
    for (const doc of DOCS) {
      it(`${doc}: examples validate against their schemas`, () => {
        const cases = examplesOf(doc);
        expect(cases.length).toBeGreaterThan(doc === 'token' ? 10 : 25);
        const failures = cases.flatMap((c) =>
          schemaProblems(c.doc, c.schemaPointer, c.value).map((p) => `${c.label}: ${p}`),
        );
        expect(failures).toEqual([]);
      });

      it(`${doc}: responses assembled from the examples pass assertResponseMatches`, () => {
        let checked = 0;
        for (const op of operationsOf(doc)) {
          for (const [status, node, loc] of responsesOf(doc, op.operationId)) {
            const content = isObject(node.content) ? node.content : {};
            const cases: [string | undefined, unknown][] =
              Object.keys(content).length === 0 ? [[undefined, undefined]] : [];
            for (const [mediaType, media] of Object.entries(content)) {
              for (const name of Object.keys(obj(obj(media).examples))) {
                const example = locate(loc.doc, `${loc.pointer}${pointerOf('content', mediaType, 'examples', name)}`);
                cases.push([mediaType, obj(example.node).value]);
              }
            }
            for (const [mediaType, body] of cases) {
              const res = { ...syntheticResponse(loc, node, mediaType, body), status: Number(status) };
              expect(() => assertResponseMatches(doc, op.operationId, res)).not.toThrow();
              checked++;
            }
          }
        }
        expect(checked).toBeGreaterThan(doc === 'token' ? 5 : 30);
      });

      it(`${doc}: request examples pass assertRequestMatches`, () => {
        for (const op of operationsOf(doc)) {
          if (!op.operation.requestBody) continue;
          const body = obj(locate(doc, `${op.pointer}/requestBody`).node);
          for (const [mediaType, media] of Object.entries(obj(body.content))) {
            const examples = Object.values(obj(obj(media).examples)).map((e) => obj(e).value);
            expect(examples.length).toBeGreaterThan(0);
            for (const value of examples)
              expect(() => assertRequestMatches(doc, op.operationId, value, mediaType)).not.toThrow();
          }
        }
      });
    }
  });

  describe('assertResponseMatches rejects responses that break the documents', () => {
    it('accepts a correct Me with plain-object or Headers headers', () => {
      expect(assertResponseMatches('public', 'getMe', { status: 200, headers: okHeaders, body: ME })).toEqual(ME);
      expect(() =>
        assertResponseMatches('public', 'getMe', {
          status: 200,
          headers: new Headers(okHeaders),
          body: JSON.stringify(ME),
        }),
      ).not.toThrow();
      expect(() =>
        assertResponseMatches('public', 'getMe', {
          status: 200,
          headers: { 'X-Request-Id': RID, 'X-RateLimit-Remaining': 0, 'Content-Type': 'application/json' },
          body: ME,
        }),
      ).not.toThrow();
    });

    it('rejects a Me with an extra field, a missing field, or a bad id', () => {
      expect(() =>
        assertResponseMatches('public', 'getMe', { status: 200, headers: okHeaders, body: { ...ME, email: 'a@b.c' } }),
      ).toThrow(/"email"/);
      const { actor: _actor, ...withoutActor } = ME;
      expect(() =>
        assertResponseMatches('public', 'getMe', { status: 200, headers: okHeaders, body: withoutActor }),
      ).toThrow(/actor/);
      expect(() =>
        assertResponseMatches('public', 'getMe', {
          status: 200,
          headers: okHeaders,
          body: { ...ME, subjectId: 'acc_01hq3v5k8m9n2p4r6s7t8v9w0z' },
        }),
      ).toThrow(/subjectId/);
      expect(() =>
        assertResponseMatches('public', 'getMe', {
          status: 200,
          headers: okHeaders,
          body: { ...ME, scopes: ['svc.admin'] },
        }),
      ).toThrow(/scopes/);
    });

    it('rejects a Tenant that leaks unlisted fields', () => {
      const body = { tenantId: ME.tenantId, displayName: 'Acme', status: 'active' };
      expect(() => assertResponseMatches('public', 'getTenant', { status: 200, headers: okHeaders, body })).toThrow(
        /"status"/,
      );
    });

    it('rejects a Problem whose error is outside the enum, or narrowed away for that status', () => {
      const problem = (error: string) => ({ error, requestId: RID });
      expect(() =>
        assertResponseMatches('public', 'getPerson', { status: 404, headers: problemHeaders, body: problem('nope') }),
      ).toThrow(/allowed values/);
      expect(() =>
        assertResponseMatches('public', 'getPerson', {
          status: 404,
          headers: problemHeaders,
          body: problem('not_found'),
        }),
      ).not.toThrow();
      // 403 on a person resource never says no_relationship (folded into 404); on /me it may.
      expect(() =>
        assertResponseMatches('public', 'getPerson', {
          status: 403,
          headers: problemHeaders,
          body: problem('no_relationship'),
        }),
      ).toThrow();
      expect(() =>
        assertResponseMatches('public', 'getMe', {
          status: 403,
          headers: problemHeaders,
          body: problem('no_relationship'),
        }),
      ).not.toThrow();
      expect(() =>
        assertResponseMatches('public', 'getMe', { status: 403, headers: problemHeaders, body: problem('not_found') }),
      ).toThrow();
      expect(() =>
        assertResponseMatches('public', 'getMe', {
          status: 403,
          headers: problemHeaders,
          body: { ...problem('forbidden'), stack: 'x' },
        }),
      ).toThrow(/"stack"/);
    });

    it('rejects a 401 without www-authenticate, and accepts it with a Bearer challenge', () => {
      const body = { error: 'invalid_token', requestId: RID };
      expect(() => assertResponseMatches('public', 'getMe', { status: 401, headers: problemHeaders, body })).toThrow(
        /www-authenticate/,
      );
      expect(() =>
        assertResponseMatches('public', 'getMe', {
          status: 401,
          headers: { ...problemHeaders, 'www-authenticate': 'Basic realm="x"' },
          body,
        }),
      ).toThrow(/www-authenticate/);
      expect(() =>
        assertResponseMatches('public', 'getMe', {
          status: 401,
          headers: { ...problemHeaders, 'www-authenticate': 'Bearer error="invalid_token"' },
          body,
        }),
      ).not.toThrow();
    });

    it('rejects a status the operation does not declare', () => {
      expect(() =>
        assertResponseMatches('public', 'getMe', {
          status: 404,
          headers: problemHeaders,
          body: { error: 'not_found', requestId: RID },
        }),
      ).toThrow(/status 404 is not declared/);
      expect(() =>
        assertResponseMatches('public', 'getTenant', { status: 500, headers: problemHeaders, body: {} }),
      ).toThrow(/not declared/);
      expect(() =>
        assertResponseMatches('public', 'noSuchOperation', { status: 200, headers: okHeaders, body: {} }),
      ).toThrow(/not declared/);
    });

    it('rejects missing or malformed required headers', () => {
      const { 'x-request-id': _rid, ...noRequestId } = okHeaders;
      expect(() => assertResponseMatches('public', 'getMe', { status: 200, headers: noRequestId, body: ME })).toThrow(
        /x-request-id/,
      );
      expect(() =>
        assertResponseMatches('public', 'getMe', {
          status: 200,
          headers: { ...okHeaders, 'x-ratelimit-remaining': '-1' },
          body: ME,
        }),
      ).toThrow(/x-ratelimit-remaining/);
      const { 'x-ratelimit-remaining': _rl, ...noRemaining } = okHeaders;
      expect(() => assertResponseMatches('public', 'getMe', { status: 200, headers: noRemaining, body: ME })).toThrow(
        /x-ratelimit-remaining/,
      );
      const limited = { error: 'rate_limited', requestId: RID };
      expect(() =>
        assertResponseMatches('public', 'getMe', { status: 429, headers: problemHeaders, body: limited }),
      ).toThrow(/retry-after/);
      expect(() =>
        assertResponseMatches('public', 'getMe', {
          status: 429,
          headers: { ...problemHeaders, 'retry-after': '0' },
          body: limited,
        }),
      ).toThrow(/retry-after/);
      expect(() =>
        assertResponseMatches('public', 'getMe', {
          status: 429,
          headers: { ...problemHeaders, 'retry-after': 'soon' },
          body: limited,
        }),
      ).toThrow(/retry-after/);
      expect(() =>
        assertResponseMatches('public', 'getMe', {
          status: 429,
          headers: { ...problemHeaders, 'retry-after': '3' },
          body: limited,
        }),
      ).not.toThrow();
      const unavailable = { error: 'authorization_unavailable', requestId: RID };
      expect(() =>
        assertResponseMatches('public', 'getMe', { status: 503, headers: problemHeaders, body: unavailable }),
      ).toThrow(/retry-after/);
    });

    it('checks etag and location on extension writes', () => {
      const created = {
        ...okHeaders,
        etag: RECORD.etag,
        location: `/v1/persons/${RECORD.personId}/extensions/${RECORD.extensionId}`,
      };
      expect(() =>
        assertResponseMatches('public', 'putPersonExtension', { status: 201, headers: created, body: RECORD }),
      ).not.toThrow();
      const { location: _l, ...noLocation } = created;
      expect(() =>
        assertResponseMatches('public', 'putPersonExtension', { status: 201, headers: noLocation, body: RECORD }),
      ).toThrow(/location/);
      expect(() =>
        assertResponseMatches('public', 'putPersonExtension', {
          status: 201,
          headers: { ...created, location: '/v1/persons/x' },
          body: RECORD,
        }),
      ).toThrow(/location/);
      expect(() =>
        assertResponseMatches('public', 'putPersonExtension', {
          status: 200,
          headers: { ...created, etag: 'W/"r1"' },
          body: RECORD,
        }),
      ).toThrow(/etag/);
      expect(() =>
        assertResponseMatches('public', 'putPersonExtension', {
          status: 200,
          headers: { ...created, etag: '"other"' },
          body: RECORD,
        }),
      ).toThrow(/differs from the etag header/);
      const conflict = { error: 'already_exists', requestId: RID };
      expect(() =>
        assertResponseMatches('public', 'putPersonExtension', { status: 409, headers: problemHeaders, body: conflict }),
      ).toThrow(/etag/);
      expect(() =>
        assertResponseMatches('public', 'putPersonExtension', {
          status: 409,
          headers: { ...problemHeaders, etag: '"r2"' },
          body: conflict,
        }),
      ).not.toThrow();
    });

    it(
      'rejects a wrong content type, a body where none is declared, ' +
        'and a requestId that differs from x-request-id',
      () => {
        const body = { error: 'not_found', requestId: RID };
        expect(() =>
          assertResponseMatches('public', 'getPerson', {
            status: 404,
            headers: { ...problemHeaders, 'content-type': 'application/json' },
            body,
          }),
        ).toThrow(/content-type/);
        const { 'content-type': _ct, ...noType } = problemHeaders;
        expect(() => assertResponseMatches('public', 'getPerson', { status: 404, headers: noType, body })).toThrow(
          /content-type is missing/,
        );
        expect(() =>
          assertResponseMatches('public', 'deletePersonExtension', {
            status: 204,
            headers: { 'x-request-id': RID },
            body: '',
          }),
        ).not.toThrow();
        expect(() =>
          assertResponseMatches('public', 'deletePersonExtension', {
            status: 204,
            headers: { 'x-request-id': RID },
            body: '{}',
          }),
        ).toThrow(/no content/);
        expect(() =>
          assertResponseMatches('public', 'getPerson', {
            status: 404,
            headers: { ...problemHeaders, 'x-request-id': 'another-id-1' },
            body,
          }),
        ).toThrow(/differs from x-request-id/);
        expect(() =>
          assertResponseMatches('public', 'getPerson', { status: 404, headers: problemHeaders, body: '{not json' }),
        ).toThrow(/not valid JSON/);
      },
    );

    it('rejects a list page over 100 items or with a bad cursor', () => {
      const item = {
        extensionId: 'loyalty_profile',
        schemaVersion: 1,
        etag: '"a"',
        updatedAt: '2026-03-05T12:00:00Z',
        updatedBy: 'tp_acme_loyalty-app',
      };
      const page = (items: unknown[], nextCursor: unknown) => ({
        status: 200,
        headers: okHeaders,
        body: { items, nextCursor },
      });
      expect(() => assertResponseMatches('public', 'listPersonExtensions', page([item], null))).not.toThrow();
      expect(() => assertResponseMatches('public', 'listPersonExtensions', page(Array(101).fill(item), 'c'))).toThrow(
        /items/,
      );
      expect(() => assertResponseMatches('public', 'listPersonExtensions', page([item], 'x'.repeat(513)))).toThrow(
        /nextCursor/,
      );
      expect(() =>
        assertResponseMatches('public', 'listPersonExtensions', page([{ ...item, data: {} }], null)),
      ).toThrow(/"data"/);
    });

    it('token: rejects unknown error codes, id_token, missing cache-control, and private key material', () => {
      const base = { 'x-request-id': RID, 'content-type': 'application/json' };
      const token = { access_token: 'a.b.c', token_type: 'Bearer', expires_in: 900, scope: 'svc.profile.self.read' };
      expect(() =>
        assertResponseMatches('token', 'issueToken', {
          status: 200,
          headers: { ...base, 'cache-control': 'no-store' },
          body: token,
        }),
      ).not.toThrow();
      expect(() => assertResponseMatches('token', 'issueToken', { status: 200, headers: base, body: token })).toThrow(
        /cache-control/,
      );
      expect(() =>
        assertResponseMatches('token', 'issueToken', {
          status: 200,
          headers: { ...base, 'cache-control': 'no-store' },
          body: { ...token, id_token: 'x.y.z' },
        }),
      ).toThrow(/id_token/);
      expect(() =>
        assertResponseMatches('token', 'issueToken', {
          status: 400,
          headers: base,
          body: { error: 'invalid_request' },
        }),
      ).toThrow(/allowed values/);
      expect(() =>
        assertResponseMatches('token', 'issueToken', {
          status: 400,
          headers: base,
          body: { error: 'invalid_scope', scope: 'x' },
        }),
      ).toThrow(/"scope"/);
      expect(() =>
        assertResponseMatches('token', 'issueToken', { status: 401, headers: base, body: { error: 'invalid_client' } }),
      ).toThrow(/www-authenticate/);
      expect(() =>
        assertResponseMatches('token', 'issueToken', {
          status: 401,
          headers: { ...base, 'www-authenticate': 'Basic realm="x"' },
          body: { error: 'invalid_grant' },
        }),
      ).toThrow(/error/);
      expect(() =>
        assertResponseMatches('token', 'issueToken', { status: 429, headers: base, body: { error: 'invalid_client' } }),
      ).toThrow(/retry-after/);
      const key = {
        kty: 'EC',
        crv: 'P-256',
        kid: 'k1',
        alg: 'ES256',
        use: 'sig',
        x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU',
        y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0',
      };
      const jwks = (k: unknown) => ({
        status: 200,
        headers: { 'x-request-id': RID, 'content-type': 'application/jwk-set+json; charset=utf-8' },
        body: { keys: [k] },
      });
      expect(() => assertResponseMatches('token', 'getJwks', jwks(key))).not.toThrow();
      expect(() => assertResponseMatches('token', 'getJwks', jwks({ ...key, d: 'secret' }))).toThrow(/"d"/);
    });

    it('token: discovery must not advertise plain PKCE or unknown grants', () => {
      const discovery = {
        issuer: 'http://127.0.0.1:3000',
        authorization_endpoint: 'http://127.0.0.1:3000/oauth2/authorize',
        token_endpoint: 'http://127.0.0.1:3000/oauth2/token',
        revocation_endpoint: 'http://127.0.0.1:3000/oauth2/revoke',
        jwks_uri: 'http://127.0.0.1:3000/.well-known/jwks.json',
        grant_types_supported: ['authorization_code', 'refresh_token'],
        code_challenge_methods_supported: ['S256'],
        response_types_supported: ['code'],
        scopes_supported: CAPABILITIES,
        claims_supported: ['sub'],
      };
      const res = (body: unknown) => ({
        status: 200,
        headers: { 'x-request-id': RID, 'content-type': 'application/json' },
        body,
      });
      expect(() => assertResponseMatches('token', 'getDiscovery', res(discovery))).not.toThrow();
      expect(() =>
        assertResponseMatches(
          'token',
          'getDiscovery',
          res({ ...discovery, code_challenge_methods_supported: ['S256', 'plain'] }),
        ),
      ).toThrow();
      expect(() =>
        assertResponseMatches('token', 'getDiscovery', res({ ...discovery, grant_types_supported: ['implicit'] })),
      ).toThrow();
    });

    it('admin: checks secrets, forbidden codes and record shapes', () => {
      const headers = { 'x-request-id': RID, 'content-type': 'application/json' };
      const client = {
        clientId: 'tp_acme_loyalty-sync',
        tenantId: ME.tenantId,
        slug: 'loyalty-sync',
        name: 'Sync',
        kind: 'third_party',
        type: 'confidential',
        status: 'active',
        redirectUris: [],
        allowedOrigins: [],
      };
      const secret = 'Vb8-kQ2mZr7tLx4cN0pWy6sDf1gHj3aE9uIo5';
      expect(() =>
        assertResponseMatches('admin', 'createClient', {
          status: 201,
          headers,
          body: { ...client, clientSecret: secret },
        }),
      ).not.toThrow();
      expect(() => assertResponseMatches('admin', 'createClient', { status: 201, headers, body: client })).toThrow(
        /clientSecret/,
      );
      expect(() =>
        assertResponseMatches('admin', 'createClient', {
          status: 201,
          headers,
          body: { ...client, type: 'public', clientSecret: secret },
        }),
      ).toThrow();
      expect(() =>
        assertResponseMatches('admin', 'updateClient', {
          status: 200,
          headers,
          body: { ...client, clientSecret: secret },
        }),
      ).toThrow(/clientSecret/);
      expect(() =>
        assertResponseMatches('admin', 'updateClient', {
          status: 200,
          headers,
          body: { ...client, clientId: 'fp_acme_loyalty-sync' },
        }),
      ).toThrow();
      expect(() =>
        assertResponseMatches('admin', 'updateClient', {
          status: 200,
          headers,
          body: { ...client, kind: 'first_party', clientId: 'fp_acme_loyalty-sync' },
        }),
      ).not.toThrow();
      expect(() =>
        assertResponseMatches('admin', 'updateClient', {
          status: 200,
          headers,
          body: { ...client, kind: 'internal', clientId: 'fp_acme_loyalty-sync' },
        }),
      ).toThrow(/clientId/);
      const problem = { 'x-request-id': RID, 'content-type': 'application/problem+json' };
      expect(() =>
        assertResponseMatches('admin', 'updateTenant', {
          status: 403,
          headers: problem,
          body: { error: 'forbidden', requestId: RID },
        }),
      ).not.toThrow();
      expect(() =>
        assertResponseMatches('admin', 'updateTenant', {
          status: 403,
          headers: problem,
          body: { error: 'tenant_mismatch', requestId: RID },
        }),
      ).toThrow();
      expect(() =>
        assertResponseMatches('admin', 'createTenant', {
          status: 409,
          headers: problem,
          body: { error: 'already_exists', requestId: RID },
        }),
      ).not.toThrow();
      expect(() =>
        assertResponseMatches('admin', 'getGrant', {
          status: 409,
          headers: problem,
          body: { error: 'already_exists', requestId: RID },
        }),
      ).toThrow(/not declared/);
      expect(() =>
        assertSchema('admin', 'AdminTenant', {
          tenantId: ME.tenantId,
          label: 'Acme_1',
          displayName: 'A',
          plan: 'L2',
          status: 'active',
        }),
      ).toThrow(/label/);
    });
  });

  describe('assertRequestMatches checks request bodies', () => {
    const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
    const form = 'application/x-www-form-urlencoded';
    const code = {
      grant_type: 'authorization_code',
      client_id: 'tp_acme_loyalty-app',
      code: 'abc',
      code_verifier: verifier,
      redirect_uri: 'https://a.example/cb',
    };

    it('token form: accepts the three shapes and rejects unlisted fields, short verifiers and unknown grants', () => {
      expect(() => assertRequestMatches('token', 'issueToken', code, form)).not.toThrow();
      expect(() =>
        assertRequestMatches('token', 'issueToken', { grant_type: 'client_credentials', client_id: 'tp_acme_sync' }),
      ).not.toThrow();
      expect(() =>
        assertRequestMatches('token', 'issueToken', {
          grant_type: 'refresh_token',
          client_id: 'tp_acme_app',
          refresh_token: 'r',
          scope: 'svc.person.read',
        }),
      ).not.toThrow();
      expect(() =>
        assertRequestMatches('token', 'issueToken', { ...code, code_verifier: verifier.slice(0, 42) }),
      ).toThrow(/code_verifier/);
      expect(() =>
        assertRequestMatches('token', 'issueToken', { ...code, code_verifier: `${verifier.slice(0, 42)}+` }),
      ).toThrow(/code_verifier/);
      expect(() => assertRequestMatches('token', 'issueToken', { ...code, scope: 'svc.person.read' })).toThrow(/scope/);
      expect(() =>
        assertRequestMatches('token', 'issueToken', { grant_type: 'password', client_id: 'tp_acme_app' }),
      ).toThrow();
      expect(() =>
        assertRequestMatches('token', 'issueToken', { grant_type: 'refresh_token', client_id: 'tp_acme_app' }),
      ).toThrow(/refresh_token/);
      expect(() => assertRequestMatches('token', 'issueToken', code, 'application/json')).toThrow(/not declared/);
    });

    it('public PUT body: closed PersonExtensionWrite', () => {
      expect(() => assertRequestMatches('public', 'putPersonExtension', { schemaVersion: 1, data: {} })).not.toThrow();
      expect(() => assertRequestMatches('public', 'putPersonExtension', { schemaVersion: 0, data: {} })).toThrow(
        /schemaVersion/,
      );
      expect(() => assertRequestMatches('public', 'putPersonExtension', { schemaVersion: 1, data: [] })).toThrow(
        /data/,
      );
      expect(() =>
        assertRequestMatches('public', 'putPersonExtension', { schemaVersion: 1, data: {}, etag: '"x"' }),
      ).toThrow(/"etag"/);
    });

    it('admin bodies: closed request schemas with the agreed bounds', () => {
      expect(() =>
        assertRequestMatches('admin', 'createTenant', { label: 'acme-east', displayName: 'Acme', plan: 'L1' }),
      ).not.toThrow();
      expect(() =>
        assertRequestMatches('admin', 'createTenant', { label: 'acme_east', displayName: 'Acme', plan: 'L1' }),
      ).toThrow(/label/);
      expect(() =>
        assertRequestMatches('admin', 'createTenant', { label: 'acme', displayName: 'Acme', plan: 'L3' }),
      ).toThrow(/plan/);
      expect(() => assertRequestMatches('admin', 'updateTenant', { status: 'paused' })).toThrow(/status/);
      expect(() =>
        assertRequestMatches('admin', 'updateTenant', { rateLimit: { tenant: { points: 10, durationS: 60 } } }),
      ).toThrow(/account/);
      expect(() =>
        assertRequestMatches('admin', 'putGrant', { capabilities: ['svc.person.read', 'svc.admin'] }),
      ).toThrow(/capabilities/);
      expect(() =>
        assertRequestMatches('admin', 'createClient', {
          slug: 'app',
          name: 'App',
          kind: 'third_party',
          type: 'public',
          redirectUris: [],
        }),
      ).toThrow(/redirectUris/);
      expect(() => assertRequestMatches('admin', 'createExtension', { name: 'x', schemas: { '0': {} } })).toThrow();
      expect(() =>
        assertRequestMatches('admin', 'createExtension', { name: 'x', schemas: { '1': { type: 'object' } } }),
      ).not.toThrow();
    });
  });
});
