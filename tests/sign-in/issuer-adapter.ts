// The issuer's storage of single-use codes and refresh tokens (contract §3): consuming is compare-and-set, so of two
// concurrent uses exactly one consumes and the other kills the whole family, on PGlite and on real PostgreSQL.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { errors } from 'oidc-provider';
import type { Database } from '../../common/db.js';
import { createAdapterFactory } from '../../issuer/adapter.js';
import { requestReads } from '../../issuer/request-reads.js';
import { migratedDatabase } from '../support/database.js';

describe('issuer-adapter', () => {
  let db: Database;
  let adapterFor: ReturnType<typeof createAdapterFactory>;
  beforeAll(async () => {
    db = await migratedDatabase();
    adapterFor = createAdapterFactory(db.knex, { clientCredentials: false });
  });
  afterAll(async () => {
    await db?.close();
  });

  describe('single-use tokens in storage', () => {
    it(
      'lets exactly one of two concurrent consumes win; ' + 'the loser gets invalid_grant and the family is gone',
      async () => {
        const grants = adapterFor('Grant');
        const tokens = adapterFor('RefreshToken');
        await grants.upsert('grant-1', { accountId: 'psn_x', clientId: 'tp_a_b' } as never, 3600);
        await tokens.upsert('rt-1', { grantId: 'grant-1', kind: 'RefreshToken' } as never, 3600);
        await tokens.upsert('rt-other', { grantId: 'grant-1', kind: 'RefreshToken' } as never, 3600);

        const outcomes = await Promise.allSettled([tokens.consume('rt-1'), tokens.consume('rt-1')]);
        expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
        const [lost] = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
        expect(lost!.reason).toBeInstanceOf(errors.InvalidGrant);
        expect(await db.knex('oidc_payloads').where({ grant_id: 'grant-1' })).toEqual([]);
      },
    );

    it('treats a second lookup of a used refresh token as a replay: not found, and the family is gone', async () => {
      const grants = adapterFor('Grant');
      const tokens = adapterFor('RefreshToken');
      await grants.upsert('grant-2', { accountId: 'psn_x', clientId: 'tp_a_b' } as never, 3600);
      await tokens.upsert('rt-2', { grantId: 'grant-2', kind: 'RefreshToken' } as never, 3600);
      expect(await tokens.find('rt-2')).toMatchObject({ grantId: 'grant-2' });
      await tokens.consume('rt-2');
      expect(await tokens.find('rt-2')).toBeUndefined();
      expect(await grants.find('grant-2')).toBeUndefined();
    });
  });

  describe('facts read while answering one token request', () => {
    it('are read once for that request, and afresh for the next', async () => {
      const reads = requestReads(db.knex);
      await db.knex('tenants').insert({ id: 'ten_reads_a', label: 'reads-a', display_name: 'A', plan: 'L1' });
      await db.knex('tenants').insert({ id: 'ten_reads_b', label: 'reads-b', display_name: 'B', plan: 'L1' });
      await db.knex('clients').insert({
        id: 'tp_reads_app',
        tenant_id: 'ten_reads_a',
        slug: 'app',
        name: 'App',
        kind: 'third_party',
        type: 'public',
        redirect_uris: '[]',
      });
      const [first, next] = [{}, {}]; // two requests' context objects
      expect(await reads.tenantOfClient(first, 'tp_reads_app')).toBe('ten_reads_a');
      await db.knex('clients').where({ id: 'tp_reads_app' }).update({ tenant_id: 'ten_reads_b' });
      expect(await reads.tenantOfClient(first, 'tp_reads_app')).toBe('ten_reads_a');
      expect(await reads.tenantOfClient(next, 'tp_reads_app')).toBe('ten_reads_b');
    });
  });
});
