import { describe, it, expect } from '@jest/globals';
import { evaluate, DEFAULT_RATE_LIMIT } from '../../policies/evaluate.js';
import type { DecisionInput } from '../../wire/decision.js';
import type { DecisionFacts } from '../../policies/store.js';

describe('pdp-evaluate', () => {
  const T = 'ten_01hzzzzzzzzzzzzzzzzzzzzzzz';
  const P = 'psn_01hzzzzzzzzzzzzzzzzzzzzzzz';
  const A = 'acc_01hzzzzzzzzzzzzzzzzzzzzzzz';
  const C = 'tp_acme_app';
  const ALL = [
    'svc.profile.self.read',
    'svc.tenant.info.read',
    'svc.person.read',
    'svc.person.metadata.read',
    'svc.person.metadata.write',
  ] as const;

  function input(over: Partial<DecisionInput['token']> = {}, rest: Partial<DecisionInput> = {}): DecisionInput {
    return {
      requestId: 'r1',
      token: {
        sub: P,
        client_id: C,
        tenant_id: T,
        profile: 'self',
        scope: ALL.join(' '),
        actor_account_id: A,
        actor_epoch: 1,
        sid: 'g1',
        ...over,
      },
      capability: 'svc.profile.self.read',
      resource: { type: 'self' },
      ...rest,
    };
  }

  function facts(over: Partial<DecisionFacts> = {}): DecisionFacts {
    return {
      client: { tenant_id: T, kind: 'third_party', status: 'active' },
      tenant: { id: T, status: 'active', plan_level: 2, rate_limit: null },
      account: { id: A, tenant_id: T, kind: 'person', status: 'active', epoch: 1, person_id: P, client_id: null },
      session: { account_id: A, client_id: C, revoked: false },
      granted: [...ALL],
      accountCapabilities: [],
      catalogue: ALL.map((id) => ({
        id,
        enabled: true,
        min_plan_level: id.startsWith('svc.person') ? 2 : 1,
        resource_type:
          { 'svc.profile.self.read': 'self', 'svc.tenant.info.read': 'tenant', 'svc.person.read': 'person' }[
            id as string
          ] ?? 'person_extension',
      })),
      relationship: true,
      subjectRelationship: true,
      personOfOtherTenant: false,
      ...over,
    };
  }

  const codeOf = (i: DecisionInput, f: DecisionFacts) => {
    const d = evaluate(i, f);
    return d.allow ? 'allow' : d.code;
  };

  describe('PDP evaluation', () => {
    it(
      'allows a self token whose every layer grants the capability, ' + 'with the effective scopes and default limits',
      () => {
        const d = evaluate(input(), facts());
        expect(d).toEqual({
          allow: true,
          effectiveScopes: [...ALL].sort(),
          subjectType: 'person',
          rateLimit: DEFAULT_RATE_LIMIT,
        });
      },
    );

    it('computes effective scopes as token ∩ grant ∩ plan ∩ open capabilities', () => {
      const f = facts({
        tenant: { id: T, status: 'active', plan_level: 1, rate_limit: null },
        granted: ['svc.profile.self.read', 'svc.person.read'],
      });
      f.catalogue = f.catalogue.map((c) => (c.id === 'svc.tenant.info.read' ? { ...c, enabled: false } : c));
      const d = evaluate(input({ scope: 'svc.profile.self.read svc.tenant.info.read svc.person.read' }), f);
      expect(d.allow && d.effectiveScopes).toEqual(['svc.profile.self.read']);
    });

    describe('the retained-data scopes below their plan (after a downgrade): the token decides, not the records', () => {
      const L1 = { id: T, status: 'active', plan_level: 1, rate_limit: null };
      const metadata = input(
        {},
        { capability: 'svc.person.metadata.read', resource: { type: 'person_extension', personId: P } },
      );

      it('allows a token that carries them, with the two metadata scopes and never svc.person.read', () => {
        const d = evaluate(metadata, facts({ tenant: L1 }));
        expect(d.allow && d.effectiveScopes).toEqual([
          'svc.person.metadata.read',
          'svc.person.metadata.write',
          'svc.profile.self.read',
          'svc.tenant.info.read',
        ]);
      });

      it('still needs the grant, and the scope in the token', () => {
        expect(codeOf(metadata, facts({ tenant: L1, granted: ['svc.profile.self.read'] }))).toBe(
          'capability_not_granted',
        );
        const narrow = input(
          { scope: 'svc.profile.self.read' },
          { capability: 'svc.person.metadata.read', resource: { type: 'person_extension', personId: P } },
        );
        // Without the scope, the plan lacks the capability (as for a tenant that was never above it).
        expect(codeOf(narrow, facts({ tenant: L1 }))).toBe('plan_capability_excluded');
      });
    });

    it('uses the tenant rate-limit policy when one is set', () => {
      const rate = { tenant: { points: 5, durationS: 1 }, account: { points: 2, durationS: 1 } };
      const d = evaluate(input(), facts({ tenant: { id: T, status: 'active', plan_level: 2, rate_limit: rate } }));
      expect(d.allow && d.rateLimit).toEqual(rate);
    });

    it.each([
      ['delegated profile', input({ profile: 'delegated' }), facts(), 'profile_not_supported'],
      ['shared profile', input({ profile: 'shared' }), facts(), 'profile_not_supported'],
      ['self token without actor', input({ actor_account_id: undefined }), facts(), 'actor_unknown'],
      [
        'workload actor differing from sub',
        input({ profile: 'workload', sub: A, actor_account_id: 'acc_other' }),
        facts(),
        'actor_unknown',
      ],
      ['unknown client', input(), facts({ client: null }), 'client_unknown'],
      [
        'client of another tenant',
        input(),
        facts({ client: { tenant_id: 'ten_x', kind: 'third_party', status: 'active' } }),
        'client_unknown',
      ],
      [
        'first-party client',
        input(),
        facts({ client: { tenant_id: T, kind: 'first_party', status: 'active' } }),
        'client_not_third_party',
      ],
      [
        'disabled client',
        input(),
        facts({ client: { tenant_id: T, kind: 'third_party', status: 'disabled' } }),
        'client_disabled',
      ],
      [
        'suspended tenant',
        input(),
        facts({ tenant: { id: T, status: 'suspended', plan_level: 2, rate_limit: null } }),
        'tenant_suspended',
      ],
      ['unknown account', input(), facts({ account: null }), 'actor_unknown'],
      ['account of another person', input({ sub: 'psn_other' }), facts(), 'actor_unknown'],
      [
        'disabled account',
        input(),
        facts({
          account: { id: A, tenant_id: T, kind: 'person', status: 'disabled', epoch: 1, person_id: P, client_id: null },
        }),
        'subject_revoked',
      ],
      [
        'revoked session',
        input(),
        facts({ session: { account_id: A, client_id: C, revoked: true } }),
        'subject_revoked',
      ],
      ['unknown session', input(), facts({ session: null }), 'subject_revoked'],
      [
        'advanced epoch',
        input({ actor_epoch: 1 }),
        facts({
          account: { id: A, tenant_id: T, kind: 'person', status: 'active', epoch: 2, person_id: P, client_id: null },
        }),
        'epoch_changed',
      ],
      ['closed capability', input(), facts({ catalogue: [] }), 'capability_unavailable'],
      [
        'capability above the plan',
        input({}, { capability: 'svc.person.read', resource: { type: 'person', personId: P } }),
        facts({ tenant: { id: T, status: 'active', plan_level: 1, rate_limit: null } }),
        'plan_capability_excluded',
      ],
      ['capability not granted', input(), facts({ granted: ['svc.tenant.info.read'] }), 'capability_not_granted'],
      ['capability not in token', input({ scope: 'svc.tenant.info.read' }), facts(), 'capability_not_in_token'],
      [
        'capability for another resource type',
        input({}, { capability: 'svc.profile.self.read', resource: { type: 'tenant' } }),
        facts(),
        'resource_type_mismatch',
      ],
      [
        'person the tenant has ended its relationship with',
        input(),
        facts({ subjectRelationship: false }),
        'subject_revoked',
      ],
      [
        'person resource without a person id',
        input({}, { capability: 'svc.person.read', resource: { type: 'person' } }),
        facts(),
        'forbidden',
      ],
      [
        'person without relationship',
        input({}, { capability: 'svc.person.read', resource: { type: 'person', personId: P } }),
        facts({ relationship: false }),
        'no_relationship',
      ],
      [
        'person of another tenant',
        input({}, { capability: 'svc.person.metadata.read', resource: { type: 'person_extension', personId: P } }),
        facts({ relationship: false, personOfOtherTenant: true }),
        'tenant_mismatch',
      ],
    ])('denies %s', (_name, i, f, code) => {
      expect(codeOf(i, f)).toBe(code);
    });

    it(
      'denies a workload token whose service account lacks the capability, ' + 'and allows it once the account has it',
      () => {
        const account = {
          id: A,
          tenant_id: T,
          kind: 'service',
          status: 'active',
          epoch: 1,
          person_id: null,
          client_id: C,
        };
        const token = { profile: 'workload', sub: A, actor_account_id: A, sid: undefined };
        expect(codeOf(input(token), facts({ account, session: null, accountCapabilities: [] }))).toBe(
          'capability_not_granted',
        );
        const d = evaluate(
          input(token),
          facts({ account, session: null, accountCapabilities: ['svc.profile.self.read'], subjectRelationship: false }),
        );
        expect(d.allow && d.effectiveScopes).toEqual(['svc.profile.self.read']);
        expect(d.allow && d.subjectType).toBe('service_account');
      },
    );
  });
});
