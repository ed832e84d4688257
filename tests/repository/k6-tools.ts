// The load tester's tools around the k6 scripts, outside k6 (not installed here): `npm run k6` refuses a k6 that
// cannot run the scripts and passes everything else to `k6 run`; the scripts' handleSummary text says first whether
// the run passed and shows each threshold with the value it was judged on.
import { describe, it, expect } from '@jest/globals';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { k6Problem, parseK6Version } from '../../infra/k6-run.js';
import { summaryFiles, textSummary, type SummaryData } from '../../infra/k6/lib/summary.js';

describe('k6-tools', () => {
  /** A directory whose `k6` prints `version` as its version and echoes the arguments of any other command. */
  function fakeK6(version: string): string {
    const dir = mkdtempSync(join(tmpdir(), 'fake-k6-'));
    const k6 = join(dir, 'k6');
    writeFileSync(
      k6,
      `#!/bin/sh\nif [ "$1" = version ]; then echo "${version}"; exit 0; fi\necho "k6 called with: $*"\nexit 99\n`,
    );
    chmodSync(k6, 0o755);
    return dir;
  }
  const pathWith = (dir: string) => ({ ...process.env, PATH: `${dir}:${process.env.PATH}` });

  describe('npm run k6', () => {
    it('reads the version from `k6 version`, old and new formats', () => {
      expect(parseK6Version('k6 v0.57.0 (commit/50afd82c18, go1.23.6, linux/amd64)')).toEqual([0, 57, 0]);
      expect(parseK6Version('k6 v2.3.0 (go1.25.1, linux/amd64)\nExtensions: none')).toEqual([2, 3, 0]);
      expect(parseK6Version('something else')).toBeUndefined();
    });

    it('refuses a missing k6 or one older than 0.57, naming the fix', () => {
      const empty = mkdtempSync(join(tmpdir(), 'no-k6-'));
      expect(k6Problem({ ...process.env, PATH: empty })).toMatch(
        /^k6 is not on the PATH: install k6 0\.57\.0 or later \(https:/,
      );
      expect(k6Problem(pathWith(fakeK6('k6 v0.56.2 (go1.22, linux/amd64)')))).toMatch(
        /^k6 0\.56\.2 is older than 0\.57\.0, the first that runs TypeScript/,
      );
      expect(k6Problem(pathWith(fakeK6('k6 v0.57.0 (go1.23, linux/amd64)')))).toBeUndefined();
      expect(k6Problem(pathWith(fakeK6('k6 v1.0.0 (go1.24, linux/amd64)')))).toBeUndefined();
    });

    it(
      'runs `k6 run` with the arguments it was given and exits with k6’s status; ' + 'exit 2 without running an old k6',
      () => {
        const tsx = join('node_modules', '.bin', 'tsx');
        const ran = spawnSync(tsx, ['infra/k6-run.ts', 'infra/k6/api-read.k6.ts', '-e', 'RATE=5'], {
          encoding: 'utf8',
          env: pathWith(fakeK6('k6 v2.3.0 (go1.25.1)')),
        });
        expect({ status: ran.status, stdout: ran.stdout.trim() }).toEqual({
          status: 99,
          stdout: 'k6 called with: run infra/k6/api-read.k6.ts -e RATE=5',
        });
        const old = spawnSync(tsx, ['infra/k6-run.ts', 'infra/k6/api-read.k6.ts'], {
          encoding: 'utf8',
          env: pathWith(fakeK6('k6 v0.45.0 (go1.20)')),
        });
        expect({ status: old.status, stdout: old.stdout, stderr: old.stderr.trim() }).toEqual({
          status: 2,
          stdout: '',
          stderr: expect.stringMatching(/^k6 0\.45\.0 is older than 0\.57\.0/),
        });
      },
    );
  });

  describe('handleSummary', () => {
    const data = (meOk: boolean): SummaryData => ({
      state: { testRunDurationMs: 61_234 },
      root_group: {
        checks: [{ name: 'me: 200', passes: 1200, fails: meOk ? 0 : 3 }],
        groups: [{ checks: [{ name: 'tenant: 200', passes: 1200, fails: 0 }], groups: [] }],
      },
      metrics: {
        'http_req_duration{scenario:reads_constant,endpoint:me}': {
          type: 'trend',
          contains: 'time',
          values: { avg: 3.1, med: 2.5, 'p(95)': meOk ? 7.8 : 64.2, 'p(99)': 12, max: 80 },
          thresholds: { 'p(95)<50': { ok: meOk } },
        },
        'http_req_failed{scenario:reads_constant}': {
          type: 'rate',
          values: { rate: 0, passes: 0, fails: 2400 },
          thresholds: { 'rate<0.01': { ok: true } },
        },
        sign_ins: { type: 'counter', values: { count: 20, rate: 0.33 } },
      },
    });

    it('leads with the verdict, then each threshold with its values, the failed checks and every metric', () => {
      const passed = textSummary('api-read', data(true));
      expect(passed.split('\n')[0]).toBe('api-read: passed, 2 thresholds held (61.2 s)');
      expect(passed).toContain(
        '  ok      http_req_duration{scenario:reads_constant,endpoint:me}: ' +
          'p(95)<50  [avg 3.10 ms, med 2.50 ms, p(95) 7.80 ms, p(99) 12 ms, max 80 ms]',
      );
      expect(passed).toContain('checks: 2,400 passed, 0 failed');
      expect(passed).toContain('  sign_ins: 20 (0.33/s)');

      const failed = textSummary('api-read', data(false));
      expect(failed.split('\n')[0]).toBe('api-read: FAILED, 1 of 2 thresholds crossed (61.2 s)');
      expect(failed).toContain(
        '  CROSSED http_req_duration{scenario:reads_constant,endpoint:me}: ' +
          'p(95)<50  [avg 3.10 ms, med 2.50 ms, p(95) 64.2 ms',
      );
      expect(failed).toContain('  failed 3 of 1,203: me: 200');
    });

    it('writes the whole summary as JSON beside the text', () => {
      const files = summaryFiles('api-read', '/tmp/run', data(true));
      expect(Object.keys(files)).toEqual(['stdout', '/tmp/run/k6-api-read-summary.json']);
      expect(JSON.parse(files['/tmp/run/k6-api-read-summary.json']!)).toEqual(data(true));
      expect(files.stdout).toContain('summary written to /tmp/run/k6-api-read-summary.json');
    });
  });
});
