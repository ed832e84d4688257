// `npm run admin`, run as a separate process against a live system: commands, JSON and table output, --help, and the
// exit codes scripts rely on (0 done, 1 refused, 2 bad usage, 3 unreachable).
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { execFile } from 'node:child_process';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { System } from '../infra/system.js';
import { COMMANDS } from '../infra/admin-cli/commands.js';
import { operationsOf } from './support/openapi.js';
import { startTestSystem } from './support/system.js';

let system: System;
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  system = await startTestSystem();
  env = { ...process.env, ADMIN_URL: `${system.pdpUrl}/admin/v1`, ADMIN_TOKEN: system.adminToken };
});
afterAll(async () => {
  await system?.close();
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function admin(args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile('node_modules/.bin/tsx', ['infra/admin-cli/main.ts', ...args], { env: { ...env, ...extraEnv } }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}
const json = (r: Run) => {
  expect(r).toMatchObject({ code: 0 });
  return JSON.parse(r.stdout);
};

describe('npm run admin', () => {
  it('has a command for every admin API operation', () => {
    expect(Object.keys(COMMANDS)).toHaveLength(operationsOf('admin').length);
  });

  it('sets up a tenant, a client, a grant and a service account, printing JSON', async () => {
    const label = `cli${Date.now().toString(36)}`;
    const tenant = json(await admin(['tenant:create', '--label', label, '--display-name', 'CLI Co', '--plan', 'L2']));
    expect(tenant).toMatchObject({ label, status: 'active' });
    const client = json(await admin(['client:create', tenant.tenantId, '--slug', 'sync', '--name', 'Sync', '--kind', 'third_party', '--type', 'confidential', '--redirect-uri', 'https://s.example/cb']));
    expect(client.clientId).toBe(`tp_${label}_sync`);
    expect(client.clientSecret).toBeTruthy();
    const grant = json(await admin(['grant:put', tenant.tenantId, client.clientId, '--capability', 'svc.tenant.info.read', '--capability', 'svc.profile.self.read']));
    expect(grant.capabilities).toEqual(['svc.profile.self.read', 'svc.tenant.info.read']);
    const sa = json(await admin(['service-account:create', tenant.tenantId, '--client-id', client.clientId, '--name', 'nightly', '--capability', 'svc.tenant.info.read']));
    expect(sa).toMatchObject({ clientId: client.clientId, status: 'active', epoch: 1 });
    expect(json(await admin(['account:epoch', sa.accountId]))).toEqual({ accountId: sa.accountId, epoch: 2 });
    expect(await admin(['account:revoke-sessions', sa.accountId])).toMatchObject({ code: 0, stdout: '' });

    const table = await admin(['grant:get', tenant.tenantId, client.clientId, '--output', 'table']);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/field.*value/);
    expect(table.stdout).toContain('capabilities');
  });

  it('reads nested bodies from JSON files, and refuses a file that is not JSON with exit 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'admin-cli-'));
    const rateLimit = { tenant: { points: 100, durationS: 60 }, account: { points: 10, durationS: 60 } };
    writeFileSync(join(dir, 'limits.json'), JSON.stringify(rateLimit));
    const tenant = json(await admin(['tenant:create', '--label', `cli${Date.now().toString(36)}r`, '--display-name', 'Limits', '--plan', 'L1']));
    expect(json(await admin(['tenant:update', tenant.tenantId, '--rate-limit-file', join(dir, 'limits.json')])).rateLimit).toEqual(rateLimit);
    writeFileSync(join(dir, 'bad.json'), '{ not json');
    const r = await admin(['extension:schema', 'loyalty_profile', '2', '--schema-file', join(dir, 'bad.json')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('cannot read JSON');
  });

  it('exits 1 with the Problem on stderr when the API refuses', async () => {
    const r = await admin(['account:update', 'acc_00000000000000000000000000', '--status', 'disabled']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('"error":"not_found"');
    const wrongToken = await admin(['usage:get', 'ten_00000000000000000000000000', '--token', 'wrong-token-0123456789']);
    expect(wrongToken.code).toBe(1);
    expect(wrongToken.stderr).toContain('invalid_token');
  });

  it('exits 2 for bad usage, naming the problem and showing the command\'s help', async () => {
    for (const args of [['no-such-command'], ['grant:get', 'only-one-arg'], ['client:update', 'tp_a_b'], ['capability:update', 'svc.person.read', '--enabled', 'maybe'], ['usage:get', 'ten_x', '--bogus']]) {
      const r = await admin(args);
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
      expect(r.stderr.length).toBeGreaterThan(0);
    }
  });

  it('prints help for every command with exit 0', async () => {
    const r = await admin(['secret:create', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: npm run admin -- secret:create <clientId>');
    const all = await admin(['--help']);
    for (const name of Object.keys(COMMANDS)) expect(all.stdout).toContain(name);
  });

  it('exits 3 when the admin API cannot be reached', async () => {
    const r = await admin(['usage:get', 'ten_00000000000000000000000000'], { ADMIN_URL: 'http://127.0.0.1:1/admin/v1' });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('cannot reach');
  });
});
