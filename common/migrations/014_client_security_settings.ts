// Per-app sender-constraint and client-authentication settings (issue 49): how a confidential app authenticates at
// the token endpoint (null = client_secret_basic, today's behaviour; private_key_jwt with the public `jwks` it
// registered), whether its access tokens must be DPoP-bound, whether its authorization requests must be pushed (PAR),
// and its security profile (fapi2). Defaults keep every existing app exactly as it was.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('clients', (t) => {
    t.text('token_endpoint_auth_method').nullable();
    t.jsonb('jwks').nullable();
    t.boolean('dpop_bound_access_tokens').notNullable().defaultTo(false);
    t.boolean('require_pushed_authorization_requests').notNullable().defaultTo(false);
    t.text('security_profile').nullable();
  });
  await knex.raw(
    `alter table clients add constraint clients_token_endpoint_auth_method_check check ` +
      `(token_endpoint_auth_method in ('client_secret_basic', 'client_secret_post', 'private_key_jwt'))`,
  );
  await knex.raw(
    `alter table clients add constraint clients_security_profile_check check (security_profile = 'fapi2')`,
  );
  // private_key_jwt authenticates with the registered keys, so it needs them.
  await knex.raw(
    `alter table clients add constraint clients_private_key_jwt_has_jwks check ` +
      `(token_endpoint_auth_method is distinct from 'private_key_jwt' or jwks is not null)`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('clients', (t) => {
    t.dropChecks([
      'clients_token_endpoint_auth_method_check',
      'clients_security_profile_check',
      'clients_private_key_jwt_has_jwks',
    ]);
    t.dropColumns(
      'token_endpoint_auth_method',
      'jwks',
      'dpop_bound_access_tokens',
      'require_pushed_authorization_requests',
      'security_profile',
    );
  });
}
