// `npm run admin`: every admin operation is a command, and commands run against a live system do what the admin API
// does, with exit codes scripts can rely on (0 done, 1 refused, 2 usage, 3 unreachable).
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import type { System } from '../../infra/system.js';
import { loadCommands, main } from '../../infra/admin-cli.js';
import type { LoadUsers } from '../../infra/admin-seed-load.js';
import { startTestSystem } from '../support/system.js';
import { readTenantFile } from '../../infra/tenant-file.js';
import { applyChanges, planChanges, readTenantState } from '../../infra/tenant-config.js';
import { applyPlan } from '../../infra/admin-config.js';
import { launchBrowser } from '../support/browser.js';
import { obtainTokens } from '../support/oauth.js';

describe('admin-cli', () => {
  let system: System;
  let env: Record<string, string>;
  beforeAll(async () => {
    system = await startTestSystem();
    env = { ADMIN_URL: `${system.pdpUrl}/admin/v1`, ADMIN_TOKEN: system.adminToken };
  });
  afterAll(async () => {
    await system?.close();
  });

  /** Runs one command line in-process; returns its exit code, stdout and stderr. */
  async function admin(...argv: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(argv, env, { out: (t) => out.push(t), err: (t) => err.push(t) });
    return { code, out: out.join('\n'), err: err.join('\n') };
  }
  const json = (r: { out: string }) => JSON.parse(r.out);

  describe('commands', () => {
    it('cover every operation of admin-api.yaml, named after its operationId', () => {
      const document = parseYaml(readFileSync(new URL('../../docs/openapi/admin-api.yaml', import.meta.url), 'utf8'));
      const operationIds = Object.values<Record<string, { operationId?: string }>>(document.paths).flatMap((item) =>
        Object.values(item)
          .map((op) => op.operationId)
          .filter(Boolean),
      );
      expect(
        loadCommands()
          .map((c) => c.operationId)
          .sort(),
      ).toEqual(operationIds.sort());
      expect(loadCommands().find((c) => c.operationId === 'createTenantAdminKey')!.name).toBe(
        'create-tenant-admin-key',
      );
    });

    it('each explain themselves with --help: arguments, fields, which are required', async () => {
      const help = await admin('create-client', '--help');
      expect(help.code).toBe(0);
      expect(help.out).toContain('npm run admin -- create-client <tenantId> [flags]');
      expect(help.out).toMatch(/--kind <third_party\|first_party\|internal>\s+\(required\)/);
      expect(help.out).toContain('--redirect-uris <string (repeat the flag)>');
      const overview = await admin('--help');
      expect(overview.code).toBe(0);
      expect(overview.out).toContain('revoke-account-sessions');
    });
  });

  describe('against a live system', () => {
    it('sets a tenant up from the shell: tenant, person, app, grant, rate limits', async () => {
      const tenant = await admin(
        'create-tenant',
        '--label',
        'cli-tenant',
        '--display-name',
        'CLI Tenant',
        '--plan',
        'L2',
      );
      expect(tenant.code).toBe(0);
      const { tenantId } = json(tenant);
      expect(json(tenant)).toMatchObject({
        label: 'cli-tenant',
        displayName: 'CLI Tenant',
        plan: 'L2',
        status: 'active',
      });

      const person = await admin(
        'create-person',
        tenantId,
        '--display-name',
        'Pat',
        '--username',
        'cli-pat',
        '--password',
        'a long enough password',
      );
      expect(person.code).toBe(0);
      expect(json(person).personId).toMatch(/^psn_/);
      // The same username in another case is the same name: 409, exit 1.
      const twin = await admin(
        'create-person',
        tenantId,
        '--display-name',
        'Pat Again',
        '--username',
        'CLI-Pat',
        '--password',
        'a long enough password',
      );
      expect(twin.code).toBe(1);
      expect(twin.err).toContain('"error": "already_exists"');

      const client = await admin(
        'create-client',
        tenantId,
        '--slug',
        'shell-app',
        '--name',
        'Shell App',
        '--kind',
        'third_party',
        '--type',
        'public',
        '--redirect-uris',
        'http://127.0.0.1:8400/a',
        '--redirect-uris',
        'http://127.0.0.1:8400/b',
      );
      expect(client.code).toBe(0);
      expect(json(client)).toMatchObject({
        clientId: 'tp_cli-tenant_shell-app',
        redirectUris: ['http://127.0.0.1:8400/a', 'http://127.0.0.1:8400/b'],
      });

      const grant = await admin(
        'put-grant',
        tenantId,
        'tp_cli-tenant_shell-app',
        '--capabilities',
        'svc.profile.self.read',
        '--capabilities',
        'svc.tenant.info.read',
      );
      expect(grant.code).toBe(0);
      expect(await system.db.knex('tenant_grants').where({ tenant_id: tenantId }).pluck('capability_id')).toEqual(
        expect.arrayContaining(['svc.profile.self.read', 'svc.tenant.info.read']),
      );

      const table = await admin('get-grant', tenantId, 'tp_cli-tenant_shell-app', '--output', 'table');
      expect(table.code).toBe(0);
      expect(table.out.split('\n')[0]).toMatch(/^field\s+value$/);
      expect(table.out).toMatch(/capabilities\s+\["svc\.profile\.self\.read","svc\.tenant\.info\.read"\]/);

      const limits = await admin(
        'update-tenant',
        tenantId,
        '--rate-limit',
        '{"tenant":{"points":50,"durationS":60},"account":{"points":10,"durationS":60}}',
      );
      expect(limits.code).toBe(0);
      expect((await system.db.knex('tenants').where({ id: tenantId }).first()).rate_limit).toEqual({
        tenant: { points: 50, durationS: 60 },
        account: { points: 10, durationS: 60 },
      });

      const withdrawn = await admin('delete-grant', tenantId, 'tp_cli-tenant_shell-app');
      expect(withdrawn).toMatchObject({
        code: 0,
        out: `DELETE /tenants/${tenantId}/grants/tp_cli-tenant_shell-app -> 204`,
      });
    });

    it('exits 1 with the Problem on stderr when the API refuses', async () => {
      await admin('create-tenant', '--label', 'cli-twice', '--display-name', 'Once', '--plan', 'L1');
      const again = await admin('create-tenant', '--label', 'cli-twice', '--display-name', 'Twice', '--plan', 'L1');
      expect(again.code).toBe(1);
      expect(again.err).toContain('-> 409');
      expect(again.err).toContain('"error": "already_exists"');
      const wrongToken = await admin(
        'get-usage',
        'ten_00000000000000000000000000',
        '--token',
        'not-the-operator-token',
      );
      expect(wrongToken.code).toBe(1);
      expect(wrongToken.err).toContain('"error": "invalid_token"');
    });

    it("takes the argument after a flag as its value even when it starts with '-', as a token does one time in 64", async () => {
      const created = await admin('create-tenant', '--label', 'cli-dash', '--display-name', '-Dash', '--plan', 'L1');
      expect({ code: created.code, displayName: json(created).displayName }).toEqual({ code: 0, displayName: '-Dash' });
      const dashToken = await admin('get-usage', json(created).tenantId, '--token', '-not-the-operator-token');
      expect({ code: dashToken.code, err: dashToken.err }).toEqual({
        code: 1,
        err: expect.stringContaining('"error": "invalid_token"'),
      });
    });

    it('exits 2 on usage errors, sending nothing', async () => {
      const before = await system.db.knex('tenants').count({ n: '*' }).first();
      for (const argv of [
        ['create-tenant', 'unexpected-positional', '--label', 'x'],
        ['create-tenant', '--label', 'x', '--no-such-flag', 'y'],
        ['update-tenant', 'ten_x', '--rate-limit', '{not json'],
        ['update-capability', 'svc.person.read', '--enabled', 'maybe'],
        ['list-decisions', 'ten_x', '--limit', 'many'],
        ['create-person'],
        ['no-such-command'],
        [],
      ])
        expect({ argv, code: (await admin(...argv)).code }).toEqual({ argv, code: 2 });
      expect(await system.db.knex('tenants').count({ n: '*' }).first()).toEqual(before);
    });

    it('exits 3 when the admin API cannot be reached', async () => {
      const res = await admin('get-usage', 'ten_x', '--url', 'http://127.0.0.1:9/admin/v1');
      expect(res.code).toBe(3);
      expect(res.err).toContain('cannot reach the admin API at http://127.0.0.1:9/admin/v1');
    });

    it('runs as `npm run admin` in its own process with ADMIN_URL and ADMIN_TOKEN from the environment, stdout only its output', async () => {
      // Asynchronously: the system under test answers from this very process. Through npm itself, because
      // platform-interfaces.md's `npm run admin -- export --tenant <tenantId> > file` must write the export's lines
      // only: the project's .npmrc sends npm's script banner to stderr.
      const npmAdmin = (...args: string[]) =>
        promisify(execFile)('npm', ['run', 'admin', '--', ...args], { env: { ...process.env, ...env } });
      const created = await npmAdmin('create-tenant', '--label', 'cli-process', '--display-name', 'P', '--plan', 'L1');
      const tenant = JSON.parse(created.stdout) as { tenantId: string; label: string };
      expect(tenant.label).toBe('cli-process');
      expect((await npmAdmin('export', '--tenant', tenant.tenantId)).stdout).toBe('');
      await expect(
        npmAdmin('create-tenant', '--label', 'cli-process', '--display-name', 'P', '--plan', 'L1', '--output', 'table'),
      ).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('already_exists') });
    });
  });

  describe('seed-load: persons, raised limits and the users file for a k6 run', () => {
    const dir = mkdtempSync(join(tmpdir(), 'seed-load-'));
    const out = join(dir, 'load-users.json');
    const redirectUri = 'http://127.0.0.1:8400/callback';
    const scope = 'svc.person.read svc.profile.self.read'; // the grant's capabilities, in the order the API lists them
    let browser: Browser;
    let tenantId: string;
    let clientId: string;
    beforeAll(async () => {
      browser = await launchBrowser();
      ({ tenantId } = json(
        await admin('create-tenant', '--label', 'cli-load', '--display-name', 'Load', '--plan', 'L2'),
      ));
      ({ clientId } = json(
        await admin(
          'create-client',
          tenantId,
          '--slug',
          'k6',
          '--name',
          'k6',
          '--kind',
          'third_party',
          '--type',
          'public',
          '--redirect-uris',
          redirectUri,
        ),
      ));
      expect(
        (
          await admin(
            'put-grant',
            tenantId,
            clientId,
            '--capabilities',
            'svc.profile.self.read',
            '--capabilities',
            'svc.person.read',
          )
        ).code,
      ).toBe(0);
    });
    afterAll(async () => {
      await browser?.close();
    });
    const read = (): LoadUsers => JSON.parse(readFileSync(out, 'utf8'));
    const rateLimitOf = async (id: string) =>
      (json(await admin('list-tenants', '--limit', '100')).items as { tenantId: string; rateLimit?: unknown }[]).find(
        (t) => t.tenantId === id,
      )?.rateLimit;

    it(
      'creates the persons, raises the tenant and account limits, ' + 'and writes a users file whose users sign in',
      async () => {
        const run = await admin(
          'seed-load',
          '--tenant',
          tenantId,
          '--client',
          clientId,
          '--persons',
          '3',
          '--extension',
          'ext_notes',
          '--out',
          out,
        );
        expect(run).toMatchObject({ code: 0, err: '' });
        expect(run.out).toContain(`3 persons ready (3 created), rate limits 1000000 per 60 s; users written to ${out}`);
        expect(run.out).toContain(`-e USERS_FILE=${out}`);
        const file = read();
        expect(file).toMatchObject({ tenantId, clientId, redirectUri, scope, extensionId: 'ext_notes' });
        expect(file.users.map((u) => u.username)).toEqual(['load-00001', 'load-00002', 'load-00003']);
        expect(new Set(file.users.map((u) => u.password)).size).toBe(1);
        for (const user of file.users) expect(user.personId).toMatch(/^psn_[0-9a-hjkmnp-tv-z]{26}$/);
        expect(statSync(out).mode & 0o777).toBe(0o600); // it holds passwords
        const window = { points: 1_000_000, durationS: 60 };
        expect(await rateLimitOf(tenantId)).toEqual({ tenant: window, account: window });
        // A user of the file signs in through the real login and consent pages and gets the file's scope.
        const user = file.users[1]!;
        const tokens = await obtainTokens(
          browser,
          { authUrl: system.authUrl, clientId, redirectUri },
          user,
          file.scope,
        );
        expect(tokens.scope?.split(' ').sort()).toEqual(scope.split(' '));
        const me = await fetch(`${system.baseUrl}/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
        expect(await me.json()).toMatchObject({ subjectType: 'person', subjectId: user.personId });
      },
    );

    it('a second run with the same file keeps the persons it made and adds the missing ones', async () => {
      const before = read();
      const run = await admin(
        'seed-load',
        '--tenant',
        tenantId,
        '--client',
        clientId,
        '--persons',
        '5',
        '--out',
        out,
        '--rate-limit-points',
        '50000',
      );
      expect(run).toMatchObject({ code: 0, err: '' });
      expect(run.out).toContain('5 persons ready (2 created), rate limits 50000 per 60 s');
      const after = read();
      expect(after.users.slice(0, 3)).toEqual(before.users);
      expect(after.users).toHaveLength(5);
      expect(after.users[4]!.password).toBe(before.users[0]!.password);
      expect(await rateLimitOf(tenantId)).toEqual({
        tenant: { points: 50_000, durationS: 60 },
        account: { points: 50_000, durationS: 60 },
      });
    });

    it(
      'refuses what it cannot do, naming why: unknown passwords, ' + 'an app that cannot sign users in, bad flags',
      async () => {
        const elsewhere = join(dir, 'other.json');
        const unknown = await admin(
          'seed-load',
          '--tenant',
          tenantId,
          '--client',
          clientId,
          '--persons',
          '2',
          '--out',
          elsewhere,
        );
        expect(unknown.code).toBe(2);
        expect(unknown.err).toContain(
          `load-00001 (and 1 more) already exist in the tenant but not ` +
            `in ${elsewhere}: pass the --password they were created with`,
        );
        const { clientId: confidential } = json(
          await admin(
            'create-client',
            tenantId,
            '--slug',
            'server',
            '--name',
            'Server',
            '--kind',
            'third_party',
            '--type',
            'confidential',
            '--redirect-uris',
            redirectUri,
          ),
        );
        const notPublic = await admin(
          'seed-load',
          '--tenant',
          tenantId,
          '--client',
          confidential,
          '--persons',
          '1',
          '--out',
          elsewhere,
        );
        expect(notPublic.code).toBe(1);
        expect(notPublic.err).toContain(`${confidential} is not an active public third-party app`);
        const missing = await admin(
          'seed-load',
          '--tenant',
          tenantId,
          '--client',
          'tp_cli-load_nothing',
          '--persons',
          '1',
          '--out',
          elsewhere,
        );
        expect(missing).toMatchObject({ code: 1, err: `the tenant ${tenantId} has no client tp_cli-load_nothing` });
        for (const argv of [
          ['--client', clientId, '--persons', '1'],
          ['--tenant', tenantId, '--client', clientId, '--persons', '0'],
          ['--tenant', tenantId, '--client', clientId, '--persons', '2', '--rate-limit-points', 'lots'],
          ['--tenant', tenantId, '--client', clientId, '--persons', '2', '--rate-limit-points', '2000000'],
        ]) {
          expect({ argv, code: (await admin('seed-load', ...argv)).code }).toEqual({ argv, code: 2 });
        }
        expect((await admin('list-persons', tenantId, '--limit', '100')).out.match(/load-0/g)).toHaveLength(5);
      },
    );
  });

  describe('a tenant kept as a file: dump, diff, apply', () => {
    /** The admin API as the operator (or `token`), for setting tenants up and editing them meanwhile. */
    const api = async (method: string, path: string, body?: unknown, token = system.adminToken) => {
      const res = await fetch(`${system.pdpUrl}/admin/v1${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body !== undefined && { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`${method} ${path} -> ${res.status} ${text}`);
      return (text ? JSON.parse(text) : {}) as Record<string, any>;
    };
    let n = 0;
    const newTenant = async (plan = 'L2') =>
      (await api('POST', '/tenants', { label: `cfg-${Date.now().toString(36)}-${++n}`, displayName: 'Config', plan }))
        .tenantId as string;
    const dir = mkdtempSync(join(tmpdir(), 'tenant-files-'));
    const fileWith = (name: string, text: string) => {
      const path = join(dir, name);
      writeFileSync(path, text);
      return path;
    };
    const auditCount = async (tenantId: string) =>
      (await api('GET', `/tenants/${tenantId}/audit?limit=100`)).items.length as number;

    /** A tenant with something of every kind the file holds. */
    async function furnishedTenant(): Promise<string> {
      const tenantId = await newTenant();
      await api('PATCH', `/tenants/${tenantId}`, {
        displayName: 'Acme Configured',
        rateLimit: { tenant: { points: 500, durationS: 60 }, account: { points: 50, durationS: 60 } },
      });
      const web = await api('POST', `/tenants/${tenantId}/clients`, {
        slug: 'web',
        name: 'Web',
        kind: 'third_party',
        type: 'confidential',
        redirectUris: ['https://web.example/callback', 'http://127.0.0.1:8400/callback'],
        allowedOrigins: ['https://web.example'],
      });
      const old = await api('POST', `/tenants/${tenantId}/clients`, {
        slug: 'old-app',
        name: 'Old',
        kind: 'third_party',
        type: 'public',
        redirectUris: ['https://old.example/cb'],
      });
      await api('PATCH', `/clients/${old.clientId}`, { status: 'disabled' });
      await api('PUT', `/tenants/${tenantId}/grants/${web.clientId}`, {
        capabilities: ['svc.tenant.info.read', 'svc.profile.self.read'],
      });
      const sa = await api('POST', `/tenants/${tenantId}/service-accounts`, {
        clientId: web.clientId,
        name: 'Web worker',
        capabilities: ['svc.person.read'],
      });
      await api('PATCH', `/accounts/${sa.accountId}`, { status: 'disabled' });
      const ext = await api('POST', `/clients/${web.clientId}/extensions`, {
        name: 'prefs',
        schemas: { '1': { type: 'object', properties: { theme: { type: 'string' } } } },
      });
      await api('PUT', `/extensions/${ext.extensionId}/schemas/2`, { type: 'object', required: ['theme'] });
      return tenantId;
    }

    it(
      'dumps a tenant without secrets, and applying the dump to an empty tenant reproduces it: the new tenant dumps ' +
        'to the same bytes, diff then finds nothing (exit 0), and a second apply changes nothing',
      async () => {
        const source = await furnishedTenant();
        const dumped = await admin('dump', '--tenant', source);
        expect(dumped.code).toBe(0);
        expect(dumped.out).toContain('slug: web');
        expect(dumped.out).not.toMatch(/secret|password/i);
        expect((await admin('dump', '--tenant', source)).out).toBe(dumped.out);

        const copy = await newTenant();
        const file = fileWith('copy.yaml', dumped.out.replace(source, copy));
        const applied = await admin('apply', file);
        expect(applied.code).toBe(0);
        expect(applied.out).toMatch(/secret of tp_cfg-[a-z0-9-]+_web \(shown once, store it now\): \S+/);
        expect(applied.out).toContain('~ service account web: status "active" -> "disabled"');

        const again = await admin('dump', '--tenant', copy);
        expect(again.out).toBe(dumped.out.replace(source, copy));
        expect(await admin('diff', file)).toEqual({ code: 0, out: '', err: 'diff: nothing would change' });
        const before = await auditCount(copy);
        expect((await admin('apply', file)).err).toMatch(/^apply: 0 change\(s\) made/);
        expect(await auditCount(copy)).toBe(before);
      },
    );

    it('diffs object by object and exits 4 when something would change, then applies exactly that', async () => {
      const tenantId = await furnishedTenant();
      const text = (await admin('dump', '--tenant', tenantId)).out;
      const edited = text
        .replace('name: Web\n', 'name: Web Renamed\n')
        .replace(/ *- svc\.tenant\.info\.read\n/, '')
        .replace(/  - slug: old-app[\s\S]*?(?=  - slug: web)/, '');
      const file = fileWith('edited.yaml', edited);
      const diff = await admin('diff', file);
      expect(diff.code).toBe(4);
      expect(diff.out.split('\n')).toEqual([
        '~ app web: name "Web" -> "Web Renamed"',
        '~ grant web: ["svc.profile.self.read","svc.tenant.info.read"] -> ["svc.profile.self.read"]',
      ]);
      const pruned = await admin('diff', file, '--prune');
      expect(pruned.out).toContain('- app old-app: delete tp_');
      expect((await admin('apply', file)).code).toBe(0);
      expect(await admin('diff', file)).toMatchObject({ code: 0, out: '' });
      expect((await admin('apply', file, '--prune')).code).toBe(0);
      const clients = await api('GET', `/tenants/${tenantId}/clients`);
      expect(clients.items.map((c: { slug: string }) => c.slug)).toEqual([expect.stringMatching(/^web$/)]);
    });

    it('reports an edit made between diff and apply (412) and does not overwrite it, nor make what follows', async () => {
      const tenantId = await furnishedTenant();
      const path = fileWith(
        'raced.yaml',
        (await admin('dump', '--tenant', tenantId)).out
          .replace('name: Web\n', 'name: From the file\n')
          .replace('name: Web worker', 'name: Worker from the file'),
      );
      const target = { base: env.ADMIN_URL!, token: env.ADMIN_TOKEN! };
      const capabilities = new Set((await api('GET', '/capabilities')).items.map((c: { id: string }) => c.id));
      const reading = readTenantFile(path, capabilities as Set<string>);
      if (!reading.ok) throw new Error(reading.problems.join('\n'));
      const plan = planChanges(await readTenantState(target, tenantId), reading.file, {
        prune: false,
        tenantKey: false,
      });
      expect(plan.changes.map((c) => c.summary)).toEqual([
        '~ app web: name "Web" -> "From the file"',
        '~ service account web: name "Web worker" -> "Worker from the file"',
      ]);
      const clientId = plan.changes[0]!.path.split('/').pop()!;
      await api('PATCH', `/clients/${clientId}`, { name: 'Edited meanwhile' });

      const result = await applyChanges(target, plan.changes, () => undefined);
      expect(result).toMatchObject({ ok: false, applied: 0, failed: plan.changes[0], error: { status: 412 } });
      // As apply reports it: which object, why, and that nothing after it was made.
      const err: string[] = [];
      const code = await applyPlan(target, plan, { out: () => undefined, err: (t) => err.push(t) });
      expect(code).toBe(1);
      expect(err.join('\n')).toContain(
        'apply stopped: app web: name "Web" -> "From the file" — it changed since diff read it (412), so it was not ' +
          'overwritten. Run diff again and review.',
      );
      expect(err.join('\n')).toContain('0 change(s) were made before it; none after it.');
      expect((await api('GET', `/clients/${clientId}`)).name).toBe('Edited meanwhile');
      const accounts = await api('GET', `/tenants/${tenantId}/service-accounts`);
      expect(accounts.items[0].name).toBe('Web worker');
    });

    it(
      "carries an app's token security settings: dumped with its public keys, registered with them by apply, " +
        'fixed once registered, a private key refused before any change',
      async () => {
        const tenantId = await newTenant();
        const jwk = {
          ...generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' }),
          kid: 'k1',
        };
        await api('POST', `/tenants/${tenantId}/clients`, {
          slug: 'bank',
          name: 'Bank',
          kind: 'third_party',
          type: 'confidential',
          redirectUris: ['https://bank.example/cb'],
          tokenEndpointAuthMethod: 'private_key_jwt',
          jwks: { keys: [jwk] },
          dpopBoundAccessTokens: true,
        });
        const dumped = (await admin('dump', '--tenant', tenantId)).out;
        const app = parseYaml(dumped).apps[0];
        expect(app.security).toEqual({
          tokenEndpointAuthMethod: 'private_key_jwt',
          jwks: { keys: [jwk] },
          dpopBoundAccessTokens: true,
        });

        const copy = await newTenant();
        const file = fileWith('secure.yaml', dumped.replace(tenantId, copy));
        const applied = await admin('apply', file);
        expect(applied.code).toBe(0);
        expect(applied.out).not.toContain('secret of'); // a private_key_jwt app has keys, never a secret
        expect((await admin('dump', '--tenant', copy)).out).toBe(dumped.replace(tenantId, copy));
        expect((await api('GET', `/tenants/${copy}/clients`)).items[0]).toMatchObject({
          tokenEndpointAuthMethod: 'private_key_jwt',
          dpopBoundAccessTokens: true,
          requirePushedAuthorizationRequests: false,
        });

        const before = await auditCount(copy);
        const unbound = fileWith(
          'unbound.yaml',
          dumped.replace(tenantId, copy).replace('dpopBoundAccessTokens: true', 'dpopBoundAccessTokens: false'),
        );
        const fixed = await admin('apply', unbound);
        expect(fixed.code).toBe(2);
        expect(fixed.err).toMatch(
          /apps\[0\]\.security: tp_cfg-[a-z0-9-]+_bank's token security settings are .* fixed at registration/,
        );
        const leaked = fileWith(
          'leaked.yaml',
          dumped.replace(tenantId, copy).replace(/( *)kid: k1\n/, '$1kid: k1\n$1d: c2VjcmV0\n'),
        );
        const refused = await admin('diff', leaked);
        expect(refused.code).toBe(2);
        expect(refused.err).toContain(
          'apps[0].security: jwks: key "k1" holds private member d: register the public key only',
        );
        expect(await auditCount(copy)).toBe(before);
      },
    );

    it('refuses a bad file before any change, listing every problem with its line', async () => {
      const tenantId = await furnishedTenant();
      const before = await auditCount(tenantId);
      const lines = (await admin('dump', '--tenant', tenantId)).out
        .replace('plan: L2', 'plan: L3')
        .replace('- svc.profile.self.read', '- svc.profile.everything')
        .replace('https://web.example/callback', 'http://localhost/callback')
        .replace('slug: old-app', 'slug: web')
        .split('\n');
      const file = fileWith('bad.yaml', lines.join('\n'));
      /** The line of the last mention of `text` (the duplicate slug is the second app's). */
      const lineOf = (text: string) => lines.map((l) => l.includes(text)).lastIndexOf(true) + 1;
      const schemaRefusal = await admin('apply', file);
      expect(schemaRefusal.code).toBe(2);
      expect(schemaRefusal.err).toContain(`${file}:${lineOf('plan: L3')}: plan: must be one of L1, L2`);
      // The rules beyond the schema are listed together once the shape is right.
      const shaped = fileWith('bad-rules.yaml', lines.join('\n').replace('plan: L3', 'plan: L2'));
      const refused = await admin('apply', shaped);
      expect(refused.code).toBe(2);
      const problems = refused.err.split('\n').slice(1);
      expect(problems).toEqual([
        `  ${shaped}:${lineOf('slug: web')}: apps[1].slug: slug web is also apps[0]'s`,
        `  ${shaped}:${lineOf('http://localhost/callback')}: apps[1].redirectUris[0]: use 127.0.0.1 or [::1] instead of localhost`,
        expect.stringMatching(
          new RegExp(
            `^  ${shaped}:${lineOf('svc.profile.everything')}: apps\\[1\\]\\.grant\\[0\\]: unknown capability svc.profile.everything`,
          ),
        ),
      ]);
      expect(await auditCount(tenantId)).toBe(before);
    });

    it('lets a tenant admin key dump, diff and apply its own tenant, never its plan or status', async () => {
      const tenantId = await furnishedTenant();
      const { key } = await api('POST', `/tenants/${tenantId}/admin-keys`);
      const asKey = async (...argv: string[]) => {
        const out: string[] = [];
        const err: string[] = [];
        const code = await main(
          argv,
          { ...env, ADMIN_TOKEN: key },
          { out: (t) => out.push(t), err: (t) => err.push(t) },
        );
        return { code, out: out.join('\n'), err: err.join('\n') };
      };
      const dumped = await asKey('dump', '--tenant', tenantId);
      expect(dumped.code).toBe(0);
      const renamed = fileWith(
        'key.yaml',
        dumped.out.replace('displayName: Acme Configured', 'displayName: By the key'),
      );
      expect((await asKey('apply', renamed)).code).toBe(0);
      expect((await api('GET', `/tenants/${tenantId}`)).displayName).toBe('By the key');
      const lines = dumped.out.replace('plan: L2', 'plan: L1').split('\n');
      const planned = await asKey('apply', fileWith('key-plan.yaml', lines.join('\n')));
      expect(planned.code).toBe(2);
      expect(planned.err).toContain(
        `:${lines.indexOf('plan: L1') + 1}: plan: only the operator changes a tenant's plan`,
      );
      const other = await newTenant();
      const elsewhere = await asKey('dump', '--tenant', other);
      expect(elsewhere.code).toBe(1);
      expect(elsewhere.err).toContain('forbidden');
    });

    it('applies 200 apps with their grants to an empty tenant in seconds', async () => {
      const tenantId = await newTenant();
      const apps = Array.from({ length: 200 }, (_, i) => ({
        slug: `app-${i}`,
        name: `App ${i}`,
        kind: 'third_party',
        type: 'public',
        status: 'active',
        redirectUris: [`https://app-${i}.example/callback`],
        grant: ['svc.profile.self.read', 'svc.tenant.info.read'],
      }));
      const file = fileWith(
        'many.yaml',
        stringifyYaml({ tenant: tenantId, displayName: 'Config', plan: 'L2', status: 'active', apps }),
      );
      const started = performance.now();
      const applied = await admin('apply', file);
      const seconds = (performance.now() - started) / 1000;
      console.log(`apply of 200 apps and 200 grants: ${seconds.toFixed(1)} s (${applied.err})`);
      expect(applied.code).toBe(0);
      expect(applied.err).toMatch(/^apply: 400 change\(s\) made/);
      expect(seconds).toBeLessThan(60);
      expect(await admin('diff', file)).toMatchObject({ code: 0, out: '' });
    });
  });
});
