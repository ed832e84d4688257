// The run's database, for jest's global setup (tests/support/global-setup.js; plain JavaScript). For an embedded
// run, the migrated template database is built once (tests/support/database-template.ts) and its path handed
// to the workers, which inherit the environment; on a real server (DATABASE_URL) each suite creates its own database.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';

export const TEMPLATE_ENV = 'TEST_EMBEDDED_DATABASE_TEMPLATE';

export function setup() {
  if (process.env.DATABASE_URL || process.env[TEMPLATE_ENV]) return;
  const tsx = new URL('../../node_modules/tsx/dist/cli.mjs', import.meta.url).pathname;
  const script = new URL('./database-template.ts', import.meta.url).pathname;
  process.env[TEMPLATE_ENV] = execFileSync(process.execPath, [tsx, script, String(process.pid)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  process.env.TEST_TEMPLATE_OWNED = '1';
}

export function teardown() {
  if (process.env.TEST_TEMPLATE_OWNED) rmSync(dirname(process.env[TEMPLATE_ENV]), { recursive: true, force: true });
}
