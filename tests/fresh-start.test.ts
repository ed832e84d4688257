// What a new user meets before anything runs: the embedded data directory is created where it is missing and reused
// where it exists, and a directory that cannot serve, or a missing browser, stops with one line naming what to fix.
import { describe, it, expect, afterAll } from '@jest/globals';
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../common/db.js';
import { parseJwks } from '../issuer/keys.js';

const scratch = mkdtempSync(join(tmpdir(), 'tp-fresh-start-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let dataDirs = 0;
type Ran = { status: number | null; lines: string[]; stdout: string };

/**
 * The issuer's cases share one embedded database, migrated by the first of them, and so take turns; the other cases
 * run beside them.
 */
const issuerData = join(scratch, 'issuer-data');
/**
 * The cases below run side by side (a dozen Node processes starting at once on a 2-core machine), and an issuer case
 * may wait for the four others before its turn: each gets minutes, not jest's default minute.
 */
const CASE_TIMEOUT_MS = 5 * 60_000;
let issuerTurn: Promise<unknown> = Promise.resolve();
function runIssuer(env: Record<string, string>): Promise<Ran> {
  const ran = issuerTurn.then(() => run('issuer/main.ts', { PGLITE_DATA_DIR: issuerData, ...env }));
  issuerTurn = ran.catch(() => undefined);
  return ran;
}

/**
 * Runs a TypeScript entry the way npm scripts do, with `env` added to a configuration that has no database set and an
 * embedded data directory of its own (so cases may run side by side: they are separate processes that mostly wait).
 */
function run(entry: string, env: Record<string, string>, args: string[] = []) {
  const {
    DATABASE_URL: _db,
    REDIS_URL: _redis,
    ISSUER_JWKS: _jwks,
    ISSUER_JWKS_FILE: _jwksFile,
    ...inherited
  } = process.env;
  const dataDir = join(scratch, `data-${++dataDirs}`);
  return new Promise<Ran>((done) => {
    execFile(
      join('node_modules', '.bin', 'tsx'),
      [entry, ...args],
      { env: { ...inherited, PGLITE_DATA_DIR: dataDir, ...env }, encoding: 'utf8', timeout: 180_000 },
      (error, stdout, stderr) => {
        const lines = stderr.split('\n').filter((l) => l.trim() !== '' && !l.includes('Unsupported runtime'));
        done({ status: error ? ((error.code as number | undefined) ?? null) : 0, lines, stdout });
      },
    );
  });
}

describe('the embedded data directory', () => {
  it(
    'is created with its parents on first use and holds the data for the next start',
    async () => {
      const dataDir = join(scratch, 'new', 'nested', 'pglite');
      const first = await openDatabase({ dataDir });
      await first.knex.raw('create table kept (value text)');
      await first.knex('kept').insert({ value: 'still here' });
      await first.close();

      const second = await openDatabase({ dataDir });
      expect(await second.knex('kept').pluck('value')).toEqual(['still here']);
      await second.close();
    },
    CASE_TIMEOUT_MS,
  );

  it.concurrent.each([
    [
      'a file stands where the directory should be',
      () => (writeFileSync(join(scratch, 'a-file'), 'x'), join(scratch, 'a-file')),
      'cannot create or read the directory',
    ],
    [
      'a parent is a file',
      () => (writeFileSync(join(scratch, 'parent-file'), 'x'), join(scratch, 'parent-file', 'pglite')),
      'cannot create or read the directory',
    ],
    [
      'the directory holds something else',
      () => {
        const dir = join(scratch, 'someone-elses');
        mkdirSync(dir);
        writeFileSync(join(dir, 'notes.txt'), 'not a database');
        return dir;
      },
      'not a PGlite data directory',
    ],
    [
      'a data directory is damaged',
      () => {
        const dir = join(scratch, 'damaged');
        mkdirSync(dir);
        writeFileSync(join(dir, 'PG_VERSION'), '17\n');
        return dir;
      },
      'cannot open the embedded database',
    ],
  ])(
    'stops npm start with one line naming the path and PGLITE_DATA_DIR when %s',
    async (_case, makePath, reason) => {
      const dataDir = makePath();
      const { status, lines } = await run('infra/start.ts', { PGLITE_DATA_DIR: dataDir });
      expect(status).toBe(2);
      expect(lines).toEqual([expect.stringContaining(`PGLITE_DATA_DIR=${dataDir}: ${reason}`)]);
    },
    CASE_TIMEOUT_MS,
  );
});

describe('a start that cannot use a setting', () => {
  it.concurrent.each([
    [
      'an unreachable DATABASE_URL',
      { DATABASE_URL: 'postgres://postgres:secret@127.0.0.1:1/none' },
      /^issuer: DATABASE_URL=postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:1\/none: cannot connect \(ECONNREFUSED/,
    ],
    [
      'the placeholder ISSUER_JWKS of the shipped manifests',
      { ISSUER_JWKS: '{"keys":[]}' },
      /^issuer: ISSUER_JWKS: must be a JWKS.*npm run admin -- keys generate/,
    ],
    [
      'an ISSUER_JWKS that is not JSON',
      { ISSUER_JWKS: 'CHANGE-ME' },
      /^issuer: ISSUER_JWKS: not valid JSON; create one with `npm run admin -- keys generate`/,
    ],
    [
      'an ISSUER_JWKS_FILE that is not there',
      { ISSUER_JWKS_FILE: '/nonexistent/jwks.json' },
      /^issuer: ISSUER_JWKS_FILE=\/nonexistent\/jwks\.json: cannot be read \(ENOENT\)/,
    ],
  ])(
    'stops with exit 2 and one line naming the setting and the fix: %s',
    async (_case, env, line) => {
      const { status, lines } = await runIssuer({ ISSUER_PORT: '0', ...env });
      expect(status).toBe(2);
      expect(lines).toEqual([expect.stringMatching(line)]);
    },
    CASE_TIMEOUT_MS,
  );

  it.concurrent(
    'refuses two services on one port naming both settings, and names the setting of a port in use',
    async () => {
      const clash = await run('infra/start.ts', {
        PGLITE_DATA_DIR: join(scratch, 'ports'),
        ISSUER_PORT: '18411',
        GATEWAY_PORT: '18411',
      });
      expect(clash.status).toBe(2);
      expect(clash.lines).toEqual([expect.stringContaining('ISSUER_PORT and GATEWAY_PORT are both 18411')]);
      const holder = createServer();
      await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
      const port = (holder.address() as AddressInfo).port;
      try {
        const taken = await runIssuer({ ISSUER_PORT: String(port) });
        expect(taken.status).toBe(1);
        expect(taken.lines).toEqual([
          expect.stringMatching(
            new RegExp(
              `^issuer: ISSUER_PORT=${port}: cannot listen on 127\\.0\\.0\\.1:${port}: the port is already in use`,
            ),
          ),
        ]);
      } finally {
        holder.close();
      }
    },
    CASE_TIMEOUT_MS,
  );

  it.concurrent(
    'makes, rotates and retires a signing-key set the issuer accepts: npm run admin -- keys',
    async () => {
      const keys = (args: string[], env: Record<string, string> = {}) =>
        run('infra/admin-cli.ts', env, ['keys', ...args]);
      const generated = await keys(['generate']);
      expect({ status: generated.status, errors: generated.lines }).toEqual({ status: 0, errors: [] });
      const first = JSON.parse(generated.stdout) as { keys: { kid: string; d: string }[] };
      expect(first.keys).toHaveLength(1);
      const rotating = await keys(['rotate'], { ISSUER_JWKS: generated.stdout });
      expect({ status: rotating.status, errors: rotating.lines }).toEqual({ status: 0, errors: [] });
      const rotated = JSON.parse(rotating.stdout) as typeof first;
      expect(rotated.keys.map((k) => k.kid)).toEqual([expect.any(String), first.keys[0]!.kid]);
      expect(rotated.keys[0]!.kid).not.toBe(first.keys[0]!.kid);
      // A thumbprint kid starts with '-' one time in 64; the old key's is given one, so `--kid <kid>` is shown to take it.
      rotated.keys[1]!.kid = `-${first.keys[0]!.kid}`;
      const file = join(scratch, 'rotated.json');
      writeFileSync(file, JSON.stringify(rotated));
      expect((await keys(['retire', '--kid', rotated.keys[0]!.kid, '--file', file])).status).toBe(2); // never the signing key
      const retiring = await keys(['retire', '--kid', rotated.keys[1]!.kid, '--file', file]);
      expect({ status: retiring.status, errors: retiring.lines }).toEqual({ status: 0, errors: [] }); // says why, if not
      const retired = JSON.parse(retiring.stdout) as typeof first;
      expect(retired.keys.map((k) => k.kid)).toEqual([rotated.keys[0]!.kid]);
      expect((await parseJwks(JSON.stringify(retired), 'test')).map((k) => k.kid)).toEqual([rotated.keys[0]!.kid]);
    },
    CASE_TIMEOUT_MS,
  );
});

describe('a bad DATABASE_URL or REDIS_URL, for every service and npm start', () => {
  const ENTRIES = [
    ['issuer', 'issuer/main.ts'],
    ['policies', 'policies/main.ts'],
    ['backend', 'backend/main.ts'],
    ['gateway', 'gateway/main.ts'],
    ['npm start', 'infra/start.ts'],
  ] as const;
  const QUIET = {
    INTERNAL_SECRET: 'x'.repeat(48),
    ...Object.fromEntries(['ISSUER_PORT', 'PDP_PORT', 'BACKEND_PORT', 'GATEWAY_PORT'].map((p) => [p, '0'])),
  };

  /** Exit 2 and, on stderr, the one line; on stdout nothing raw (knex's warning, a stack frame). */
  async function expectOneLine(entry: string, env: Record<string, string>, line: RegExp) {
    const { status, lines, stdout } = await run(entry, { ...QUIET, ...env });
    expect({ status, lines }).toEqual({ status: 2, lines: [expect.stringMatching(line)] });
    expect(stdout).not.toContain('Acquire connection error');
    expect(stdout).not.toMatch(/^\s+at /m);
  }

  const connectionFailure = (name: string, code: string) =>
    new RegExp(
      `^${name}: DATABASE_URL=\\S+: cannot connect \\(${code}: .*\\); ` +
        'check that PostgreSQL runs there and accepts this user and database$',
    );
  // The servers' own refusals need the real servers: those of CI's second run (and of this machine's test runs).
  const postgres = process.env.DATABASE_URL;
  const redis = process.env.REDIS_URL;

  const databaseCases: [string, string, string, RegExp][] = [
    ...ENTRIES.map(([name, entry]): [string, string, string, RegExp] => [
      `${name}: nothing listens there`,
      entry,
      'postgres://nobody@127.0.0.1:1/x',
      connectionFailure(name, 'ECONNREFUSED'),
    ]),
    ...(postgres
      ? [ENTRIES[1], ENTRIES[4]].flatMap(([name, entry]): [string, string, string, RegExp][] => [
          [
            `${name}: an unknown user`,
            entry,
            withUrl(postgres, (u) => (u.username = 'no_such_role_30')),
            connectionFailure(name, '28000'),
          ],
          [
            `${name}: an unknown database`,
            entry,
            withUrl(postgres, (u) => (u.pathname = '/no_such_db_30')),
            connectionFailure(name, '3D000'),
          ],
        ])
      : []),
  ];
  it.concurrent.each(databaseCases)(
    'DATABASE_URL, %s',
    (_case, entry, url, line) => expectOneLine(entry, { DATABASE_URL: url }, line),
    CASE_TIMEOUT_MS,
  );

  const redisCases: [string, string, string, RegExp][] = [
    ...ENTRIES.map(([name, entry]): [string, string, string, RegExp] => [
      `${name}: not a Redis URL`,
      entry,
      'http://user:secret@127.0.0.1:6379',
      new RegExp(
        `^${name}: Invalid configuration: ` +
          String.raw`REDIS_URL="http://user:\*\*\*@127\.0\.0\.1:6379/?": must be a redis:// or rediss:// URL$`,
      ),
    ]),
    ...(redis
      ? [ENTRIES[0], ENTRIES[3], ENTRIES[4]].map(([name, entry]): [string, string, string, RegExp] => [
          `${name}: a user and password Redis refuses`,
          entry,
          withUrl(redis, (u) => ((u.username = 'nobody'), (u.password = 'wrong'))),
          new RegExp(
            `^${name}: REDIS_URL=redis://nobody:\\*\\*\\*@\\S+: Redis refused the connection \\(WRONGPASS .*\\); ` +
              'check the user, password and database number in it, or unset REDIS_URL for in-process limits$',
          ),
        ])
      : []),
  ];
  it.concurrent.each(redisCases)(
    'REDIS_URL, %s',
    (_case, entry, url, line) => expectOneLine(entry, { REDIS_URL: url }, line),
    CASE_TIMEOUT_MS,
  );
});

/** `url` changed by `change`. */
function withUrl(url: string, change: (u: URL) => void): string {
  const u = new URL(url);
  change(u);
  return u.toString();
}

describe('the browser check before npm test', () => {
  it.concurrent(
    'stops with one line naming the fix when CHROMIUM_PATH names no executable',
    async () => {
      const missing = join(scratch, 'no-chromium-here');
      const { status, lines } = await run('tests/support/ensure-chromium.ts', { CHROMIUM_PATH: missing });
      expect(status).toBe(1);
      expect(lines).toEqual([
        `CHROMIUM_PATH=${missing} is not an executable file: ` +
          `point it at a Chromium binary, or unset it to use Debian's /usr/bin/chromium.`,
      ]);
    },
    CASE_TIMEOUT_MS,
  );
});
