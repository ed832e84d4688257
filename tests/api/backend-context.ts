// The backend answers only the gateway: the call context must carry the gateway's MAC, be unexpired, and be bound to
// this request's id, method and path, so a context header copied from one call cannot be replayed for another.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { listen } from '../../common/http.js';
import { createLogger } from '../../common/log.js';
import type { Database } from '../../common/db.js';
import {
  CONTEXT_HEADER,
  CONTEXT_MAC_HEADER,
  CONTEXT_TTL_MS,
  contextSigner,
  type CallContext,
} from '../../common/internal-context.js';
import { createBackendApp } from '../../backend/app.js';
import { migratedDatabase } from '../support/database.js';

describe('backend-context', () => {
  const SECRET = 'backend-context-test-secret-0123456789';
  const sign = contextSigner(SECRET);
  let db: Database;
  let backend: Awaited<ReturnType<typeof listen>>;

  beforeAll(async () => {
    db = await migratedDatabase();
    backend = await listen(0);
    backend.server.on(
      'request',
      createBackendApp({ knex: db.knex, internalSecret: SECRET, log: createLogger('backend', 'silent') }),
    );
  });
  afterAll(async () => {
    await backend?.close();
    await db?.close();
  });

  const context = (over: Partial<CallContext> = {}): CallContext => ({
    requestId: 'req-00000001',
    subjectType: 'person',
    subjectId: 'psn_alice',
    tenantId: 'ten_a',
    clientId: 'tp_a_app',
    actorAccountId: 'acc_alice',
    scopes: ['svc.profile.self.read'],
    ...over,
  });
  const getMe = (headers: Record<string, string>, requestId = 'req-00000001') =>
    fetch(`${backend.url}/v1/me`, { headers: { 'x-request-id': requestId, ...headers } });

  describe('the backend trusts only a context signed for this request', () => {
    it('answers a call whose context the gateway signed for it', async () => {
      const res = await getMe(sign(context(), { method: 'GET', path: '/v1/me' }));
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ subjectId: 'psn_alice', tenantId: 'ten_a' });
    });

    it.each([
      ['no context', () => ({})],
      ['the old static secret header alone', () => ({ 'x-internal-secret': SECRET })],
      [
        'a context signed with another secret',
        () => contextSigner('another-secret-0123456789-0123456789')(context(), { method: 'GET', path: '/v1/me' }),
      ],
      [
        'a copied header replayed with another request id',
        () => sign(context({ requestId: 'req-00000002' }), { method: 'GET', path: '/v1/me' }),
      ],
      ['a copied header replayed on another path', () => sign(context(), { method: 'GET', path: '/v1/tenant' })],
      ['a copied header replayed with another method', () => sign(context(), { method: 'DELETE', path: '/v1/me' })],
      ['an expired context', () => sign(context(), { method: 'GET', path: '/v1/me' }, Date.now() - CONTEXT_TTL_MS - 1)],
      [
        'a context whose subject was changed after signing',
        () => {
          const headers = sign(context(), { method: 'GET', path: '/v1/me' });
          const changed = {
            ...JSON.parse(Buffer.from(headers[CONTEXT_HEADER]!, 'base64url').toString()),
            subjectId: 'psn_mallory',
          };
          return { ...headers, [CONTEXT_HEADER]: Buffer.from(JSON.stringify(changed)).toString('base64url') };
        },
      ],
      [
        'a MAC that is not one',
        () => ({ ...sign(context(), { method: 'GET', path: '/v1/me' }), [CONTEXT_MAC_HEADER]: 'AAAA' }),
      ],
    ])('refuses %s with 403 forbidden', async (_name, headers) => {
      const res = await getMe(headers());
      expect(res.status).toBe(403);
      expect((await res.json()).error).toBe('forbidden');
    });
  });
});
