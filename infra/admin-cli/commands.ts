// Every admin API operation as a command: its arguments, options and the HTTP call they make. Data, not code, so the
// help text, the parser and the request come from one description.

export type OptionKind = 'string' | 'strings' | 'true-false' | 'integer' | 'json-file';

export interface OptionSpec {
  kind: OptionKind;
  help: string;
  required?: boolean;
  /** The request body member it fills (default: none; used in the query or path instead). */
  field?: string;
}

export interface CommandSpec {
  summary: string;
  /** Positional arguments, in order, all required. */
  args: string[];
  options: Record<string, OptionSpec>;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: (a: Record<string, string>, o: Record<string, unknown>) => string;
  /** Sends the option fields as a JSON body; `rawBody` sends one option's parsed JSON file as the whole body. */
  body?: 'fields' | { rawBody: string };
}

const e = encodeURIComponent;
const status = (values: string): OptionSpec => ({ kind: 'string', required: true, field: 'status', help: `one of ${values}` });

export const COMMANDS: Record<string, CommandSpec> = {
  'tenant:create': {
    summary: 'Create a tenant', args: [], method: 'POST', path: () => '/tenants', body: 'fields',
    options: {
      label: { kind: 'string', required: true, field: 'label', help: 'lowercase label, part of client ids' },
      'display-name': { kind: 'string', required: true, field: 'displayName', help: 'display name' },
      plan: { kind: 'string', required: true, field: 'plan', help: 'L1 or L2' },
    },
  },
  'tenant:update': {
    summary: "Change a tenant's display name, plan, status or rate limits (plan and status: operator only)",
    args: ['tenantId'], method: 'PATCH', path: (a) => `/tenants/${e(a.tenantId!)}`, body: 'fields',
    options: {
      'display-name': { kind: 'string', field: 'displayName', help: 'display name' },
      plan: { kind: 'string', field: 'plan', help: 'L1 or L2' },
      status: { kind: 'string', field: 'status', help: 'active or suspended' },
      'rate-limit-file': { kind: 'json-file', field: 'rateLimit', help: 'JSON file: {"tenant": {"points", "durationS"}, "account": {...}}' },
    },
  },
  'admin-key:create': {
    summary: 'Create a tenant admin key (shown once)', args: ['tenantId'], method: 'POST', options: {},
    path: (a) => `/tenants/${e(a.tenantId!)}/admin-keys`,
  },
  'admin-key:revoke': {
    summary: 'Revoke a tenant admin key', args: ['tenantId', 'keyId'], method: 'DELETE', options: {},
    path: (a) => `/tenants/${e(a.tenantId!)}/admin-keys/${e(a.keyId!)}`,
  },
  'person:create': {
    summary: 'Create a person with a login account in a tenant', args: ['tenantId'], method: 'POST', body: 'fields',
    path: (a) => `/tenants/${e(a.tenantId!)}/persons`,
    options: {
      'display-name': { kind: 'string', required: true, field: 'displayName', help: 'display name' },
      username: { kind: 'string', required: true, field: 'username', help: 'login name' },
      password: { kind: 'string', required: true, field: 'password', help: 'initial password' },
    },
  },
  'person:end': {
    summary: "End a tenant's relationship with a person", args: ['tenantId', 'personId'], method: 'DELETE', options: {},
    path: (a) => `/tenants/${e(a.tenantId!)}/persons/${e(a.personId!)}`,
  },
  'client:create': {
    summary: 'Register a client (a confidential client\'s secret is shown once)', args: ['tenantId'], method: 'POST', body: 'fields',
    path: (a) => `/tenants/${e(a.tenantId!)}/clients`,
    options: {
      slug: { kind: 'string', required: true, field: 'slug', help: 'lowercase slug, part of the client id' },
      name: { kind: 'string', required: true, field: 'name', help: 'name' },
      kind: { kind: 'string', required: true, field: 'kind', help: 'third_party, first_party or internal' },
      type: { kind: 'string', required: true, field: 'type', help: 'confidential or public' },
      'redirect-uri': { kind: 'strings', required: true, field: 'redirectUris', help: 'redirect URI' },
      'allowed-origin': { kind: 'strings', field: 'allowedOrigins', help: 'browser origin allowed at the token endpoint' },
    },
  },
  'client:update': {
    summary: 'Enable or disable a client', args: ['clientId'], method: 'PATCH', body: 'fields',
    path: (a) => `/clients/${e(a.clientId!)}`, options: { status: status('active, disabled') },
  },
  'secret:create': {
    summary: "Create a client's next secret (old and next valid for at most 7 days)", args: ['clientId'], method: 'POST', options: {},
    path: (a) => `/clients/${e(a.clientId!)}/secrets`,
  },
  'secret:promote': {
    summary: 'Make the next secret the only one (the old one stops at once)', args: ['clientId'], method: 'POST', options: {},
    path: (a) => `/clients/${e(a.clientId!)}/secrets/promote`,
  },
  'grant:put': {
    summary: 'Set the capabilities a tenant grants to a client', args: ['tenantId', 'clientId'], method: 'PUT', body: 'fields',
    path: (a) => `/tenants/${e(a.tenantId!)}/grants/${e(a.clientId!)}`,
    options: { capability: { kind: 'strings', field: 'capabilities', help: 'capability (none = grant nothing)' } },
  },
  'grant:get': {
    summary: "Read a tenant's grant to a client", args: ['tenantId', 'clientId'], method: 'GET', options: {},
    path: (a) => `/tenants/${e(a.tenantId!)}/grants/${e(a.clientId!)}`,
  },
  'grant:delete': {
    summary: "Withdraw a tenant's grant to a client", args: ['tenantId', 'clientId'], method: 'DELETE', options: {},
    path: (a) => `/tenants/${e(a.tenantId!)}/grants/${e(a.clientId!)}`,
  },
  'service-account:create': {
    summary: 'Create the service account a client acts as with client_credentials', args: ['tenantId'], method: 'POST', body: 'fields',
    path: (a) => `/tenants/${e(a.tenantId!)}/service-accounts`,
    options: {
      'client-id': { kind: 'string', required: true, field: 'clientId', help: 'the client' },
      name: { kind: 'string', required: true, field: 'name', help: 'name' },
      capability: { kind: 'strings', field: 'capabilities', help: 'capability' },
    },
  },
  'account:update': {
    summary: 'Enable or disable an account (person login or service account)', args: ['accountId'], method: 'PATCH', body: 'fields',
    path: (a) => `/accounts/${e(a.accountId!)}`, options: { status: status('active, disabled') },
  },
  'account:epoch': {
    summary: "Advance an account's epoch (its tokens stop: epoch_changed)", args: ['accountId'], method: 'POST', options: {},
    path: (a) => `/accounts/${e(a.accountId!)}/epoch`,
  },
  'account:revoke-sessions': {
    summary: 'End every session and refresh-token family of an account', args: ['accountId'], method: 'POST', options: {},
    path: (a) => `/accounts/${e(a.accountId!)}/sessions/revoke`,
  },
  'extension:create': {
    summary: 'Register a person extension for a client', args: ['clientId'], method: 'POST', body: 'fields',
    path: (a) => `/clients/${e(a.clientId!)}/extensions`,
    options: {
      name: { kind: 'string', required: true, field: 'name', help: 'name' },
      'schemas-file': { kind: 'json-file', required: true, field: 'schemas', help: 'JSON file: {"1": <JSON Schema>, ...}' },
    },
  },
  'extension:schema': {
    summary: 'Register a schema version of an extension', args: ['extensionId', 'version'], method: 'PUT', body: { rawBody: 'schema-file' },
    path: (a) => `/extensions/${e(a.extensionId!)}/schemas/${e(a.version!)}`,
    options: { 'schema-file': { kind: 'json-file', required: true, help: 'JSON file holding the JSON Schema' } },
  },
  'capability:update': {
    summary: 'Open or close a capability on this deployment (operator only)', args: ['capability'], method: 'PATCH', body: 'fields',
    path: (a) => `/capabilities/${e(a.capability!)}`,
    options: { enabled: { kind: 'true-false', required: true, field: 'enabled', help: 'true or false' } },
  },
  'decisions:list': {
    summary: "A tenant's recent authorization decisions, newest first", args: ['tenantId'], method: 'GET',
    path: (a, o) => `/tenants/${e(a.tenantId!)}/decisions${o.limit !== undefined ? `?limit=${o.limit}` : ''}`,
    options: { limit: { kind: 'integer', help: 'how many, 1 to 1000 (default 50)' } },
  },
  'usage:get': {
    summary: "A tenant's metered API calls", args: ['tenantId'], method: 'GET', options: {},
    path: (a) => `/tenants/${e(a.tenantId!)}/usage`,
  },
};
