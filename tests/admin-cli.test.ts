// `npm run admin`: every admin operation is a command, and commands run against a live system do what the admin API
// does, with exit codes scripts can rely on (0 done, 1 refused, 2 usage, 3 unreachable).
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { parse as parseYaml } from 'yaml';
import type { System } from '../infra/system.js';
import { loadCommands, main } from '../infra/admin-cli.js';
import type { LoadUsers } from '../infra/admin-seed-load.js';
import { startTestSystem } from './support/system.js';
import { launchBrowser } from './support/browser.js';
import { obtainTokens } from './support/oauth.js';

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
    const document = parseYaml(readFileSync(new URL('../docs/openapi/admin-api.yaml', import.meta.url), 'utf8'));
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
    expect(loadCommands().find((c) => c.operationId === 'createTenantAdminKey')!.name).toBe('create-tenant-admin-key');
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
    const wrongToken = await admin('get-usage', 'ten_00000000000000000000000000', '--token', 'not-the-operator-token');
    expect(wrongToken.code).toBe(1);
    expect(wrongToken.err).toContain('"error": "invalid_token"');
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

  it('runs as `npm run admin` in its own process with ADMIN_URL and ADMIN_TOKEN from the environment', async () => {
    // Asynchronously: the system under test answers from this very process.
    const run = (label: string) =>
      promisify(execFile)(
        join('node_modules', '.bin', 'tsx'),
        [
          'infra/admin-cli.ts',
          'create-tenant',
          '--label',
          label,
          '--display-name',
          'P',
          '--plan',
          'L1',
          '--output',
          'table',
        ],
        { env: { ...process.env, ...env } },
      );
    const created = await run('cli-process');
    expect(created.stdout).toMatch(/label\s+cli-process/);
    await expect(run('cli-process')).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('already_exists'),
    });
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
      const tokens = await obtainTokens(browser, { authUrl: system.authUrl, clientId, redirectUri }, user, file.scope);
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
