// The whole data model the contract implies. Plans and the v1 capability catalogue are data, seeded here.
import type { Knex } from 'knex';

const CAPABILITIES = [
  {
    id: 'svc.profile.self.read',
    description: 'Read the identity behind this token',
    resource_type: 'self',
    min_plan: 'L1',
  },
  {
    id: 'svc.tenant.info.read',
    description: "Read the tenant's public identity",
    resource_type: 'tenant',
    min_plan: 'L1',
  },
  {
    id: 'svc.person.read',
    description: 'Read minimal person fields (display name, creation time)',
    resource_type: 'person',
    min_plan: 'L2',
  },
  {
    id: 'svc.person.metadata.read',
    description: "Read this app's own metadata about a person",
    resource_type: 'person_extension',
    min_plan: 'L2',
  },
  {
    id: 'svc.person.metadata.write',
    description: "Write and delete this app's own metadata about a person",
    resource_type: 'person_extension',
    min_plan: 'L2',
  },
];

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('plans', (t) => {
    t.text('id').primary();
    t.integer('level').notNullable().unique();
    t.text('name').notNullable();
  });
  await knex('plans').insert([
    { id: 'L1', level: 1, name: 'Level 1' },
    { id: 'L2', level: 2, name: 'Level 2' },
  ]);

  await knex.schema.createTable('capabilities', (t) => {
    t.text('id').primary();
    t.text('description').notNullable();
    t.text('resource_type').notNullable();
    t.text('min_plan').notNullable().references('plans.id');
    t.text('availability').notNullable().checkIn(['planned', 'preview', 'ga']);
    t.boolean('enabled').notNullable().defaultTo(true); // closed on this deployment -> capability_unavailable
    t.text('catalogue_version').notNullable();
  });
  await knex('capabilities').insert(
    CAPABILITIES.map((c) => ({ ...c, availability: 'preview', catalogue_version: '1.0.0-draft' })),
  );

  await knex.schema.createTable('tenants', (t) => {
    t.text('id').primary();
    t.text('label').notNullable().unique();
    t.text('display_name').notNullable();
    t.text('plan').notNullable().references('plans.id');
    t.text('status').notNullable().defaultTo('active').checkIn(['active', 'suspended']);
    t.jsonb('rate_limit'); // {tenant:{points,durationS}, account:{points,durationS}}; null = platform defaults
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('tenant_admin_keys', (t) => {
    t.text('id').primary();
    t.text('tenant_id').notNullable().references('tenants.id');
    t.text('key_hash').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('clients', (t) => {
    t.text('id').primary();
    t.text('tenant_id').notNullable().references('tenants.id');
    t.text('slug').notNullable();
    t.text('name').notNullable();
    t.text('kind').notNullable().checkIn(['third_party', 'first_party', 'internal']);
    t.text('type').notNullable().checkIn(['confidential', 'public']);
    t.text('status').notNullable().defaultTo('active').checkIn(['active', 'disabled']);
    t.jsonb('redirect_uris').notNullable();
    t.jsonb('allowed_origins').notNullable().defaultTo('[]');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['tenant_id', 'slug']);
  });

  await knex.schema.createTable('client_secrets', (t) => {
    t.text('id').primary();
    t.text('client_id').notNullable().references('clients.id');
    t.text('secret_hash').notNullable();
    t.text('state').notNullable().checkIn(['current', 'next']);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }); // overlap end for the old secret once a next one exists
    t.index(['client_id']);
  });

  await knex.schema.createTable('persons', (t) => {
    t.text('id').primary();
    t.text('display_name').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('tenant_person_relationships', (t) => {
    t.text('tenant_id').notNullable().references('tenants.id');
    t.text('person_id').notNullable().references('persons.id');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('ended_at', { useTz: true });
    t.primary(['tenant_id', 'person_id']);
  });

  // People's login accounts and tenants' service accounts share one table and one prefix (acc_).
  await knex.schema.createTable('accounts', (t) => {
    t.text('id').primary();
    t.text('tenant_id').notNullable().references('tenants.id');
    t.text('kind').notNullable().checkIn(['person', 'service']);
    t.text('status').notNullable().defaultTo('active').checkIn(['active', 'disabled']);
    t.integer('epoch').notNullable().defaultTo(1);
    t.text('person_id').references('persons.id');
    t.text('username').unique();
    t.text('password_hash');
    t.text('client_id').references('clients.id'); // service accounts: the program that acts as it
    t.text('name');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['person_id']);
  });

  await knex.schema.createTable('service_account_capabilities', (t) => {
    t.text('account_id').notNullable().references('accounts.id');
    t.text('capability_id').notNullable().references('capabilities.id');
    t.primary(['account_id', 'capability_id']);
  });

  await knex.schema.createTable('tenant_grants', (t) => {
    t.text('tenant_id').notNullable().references('tenants.id');
    t.text('client_id').notNullable().references('clients.id');
    t.text('capability_id').notNullable().references('capabilities.id');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['tenant_id', 'client_id', 'capability_id']);
  });

  await knex.schema.createTable('extensions', (t) => {
    t.text('id').primary();
    t.text('tenant_id').notNullable().references('tenants.id');
    t.text('client_id').notNullable().references('clients.id');
    t.text('name').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['tenant_id']);
  });

  await knex.schema.createTable('extension_schemas', (t) => {
    t.text('extension_id').notNullable().references('extensions.id');
    t.integer('version').notNullable();
    t.jsonb('schema').notNullable();
    t.primary(['extension_id', 'version']);
  });

  await knex.schema.createTable('person_extensions', (t) => {
    t.text('tenant_id').notNullable().references('tenants.id');
    t.text('person_id').notNullable().references('persons.id');
    t.text('extension_id').notNullable().references('extensions.id');
    t.integer('schema_version').notNullable();
    t.jsonb('data').notNullable();
    t.text('etag').notNullable();
    t.text('updated_by').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
    t.primary(['tenant_id', 'person_id', 'extension_id']);
    t.index(['tenant_id', 'extension_id']);
  });

  // Issuer state: oidc-provider models (sessions, interactions, grants, codes, refresh tokens).
  await knex.schema.createTable('oidc_payloads', (t) => {
    t.text('model').notNullable();
    t.text('id').notNullable();
    t.jsonb('payload').notNullable();
    t.text('grant_id');
    t.text('uid');
    t.timestamp('expires_at', { useTz: true });
    t.timestamp('consumed_at', { useTz: true });
    t.primary(['model', 'id']);
    t.index(['grant_id']);
    t.index(['model', 'uid']);
    t.index(['expires_at']);
  });

  // A consented authorization (oidc-provider grant): the `sid` of self tokens. Revoked = subject_revoked.
  await knex.schema.createTable('sessions', (t) => {
    t.text('id').primary();
    t.text('account_id').notNullable().references('accounts.id');
    t.text('client_id').notNullable().references('clients.id');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('revoked_at', { useTz: true });
    t.index(['account_id']);
  });

  // Signing keys generated by the issuer when no ISSUER_JWKS is configured.
  await knex.schema.createTable('issuer_keys', (t) => {
    t.text('kid').primary();
    t.jsonb('private_jwk').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('usage_records', (t) => {
    // Keyed by (tenant, call id) since migration 008; callers
    // choose request ids, so one tenant cannot shadow another's.
    t.text('request_id').notNullable();
    t.text('tenant_id').notNullable();
    t.text('client_id').notNullable();
    t.text('account_id').notNullable();
    t.text('operation_id').notNullable();
    t.integer('status').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['tenant_id', 'request_id']);
    t.index(['tenant_id', 'created_at']);
  });

  await knex.schema.createTable('decision_logs', (t) => {
    t.bigIncrements('id');
    t.text('request_id').notNullable();
    t.text('tenant_id');
    t.text('client_id');
    t.text('subject');
    t.text('capability');
    t.boolean('allow').notNullable();
    t.text('code');
    t.text('check_name').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['tenant_id', 'id']);
    t.index(['request_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'decision_logs',
    'usage_records',
    'issuer_keys',
    'sessions',
    'oidc_payloads',
    'person_extensions',
    'extension_schemas',
    'extensions',
    'tenant_grants',
    'service_account_capabilities',
    'accounts',
    'tenant_person_relationships',
    'persons',
    'client_secrets',
    'clients',
    'tenant_admin_keys',
    'tenants',
    'capabilities',
    'plans',
  ])
    await knex.schema.dropTableIfExists(table);
}
