// The embedded runs' scratch directories (tests/support/database-scratch.ts): a run stopped before its teardown leaves
// its template and copies behind, and the next run removes them, never those of a run still going.
import { describe, it, expect, afterEach } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { removeAbandonedRuns, runDirectoryPrefix } from '../support/database-scratch.js';

describe('test-databases', () => {
  const roots: string[] = [];
  afterEach(() => roots.splice(0).forEach((root) => rmSync(root, { recursive: true, force: true })));

  /** A scratch root holding a run directory, with a file in it, for each owner pid. */
  function rootWithRuns(owners: number[]): { root: string; runs: string[] } {
    const root = mkdtempSync(join(tmpdir(), 'tpi-scratch-test-'));
    roots.push(root);
    const runs = owners.map((pid) => {
      const run = mkdtempSync(join(root, runDirectoryPrefix(pid)));
      mkdirSync(join(run, 'migrated'));
      writeFileSync(join(run, 'migrated', 'PG_VERSION'), '17\n');
      return run;
    });
    return { root, runs };
  }

  /** The pid of a process that has exited (and been reaped), so no process has it for now. */
  const exitedPid = () =>
    spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();

  describe('scratch directories of embedded test runs', () => {
    it('removes the directory of a run whose jest process is gone, with everything in it', () => {
      const { root, runs } = rootWithRuns([Number(exitedPid())]);
      expect(removeAbandonedRuns(root)).toHaveLength(1);
      expect(existsSync(runs[0]!)).toBe(false);
    });

    it("keeps a running run's directory and anything that is not a run's", () => {
      const { root, runs } = rootWithRuns([process.pid]);
      mkdirSync(join(root, 'tpi-test-template-AbC123'));
      mkdirSync(join(root, 'something-else-1-'));
      expect(removeAbandonedRuns(root)).toEqual([]);
      expect(existsSync(runs[0]!)).toBe(true);
      expect(existsSync(join(root, 'tpi-test-template-AbC123'))).toBe(true);
      expect(existsSync(join(root, 'something-else-1-'))).toBe(true);
    });

    // A run's directory named after a process that had already exited was removed by any other run starting meanwhile
    // (a second `npm test` in another clone), and every suite of the first run then failed to copy the template.
    it("an embedded run's own directory names its jest process, which is running", () => {
      const template = process.env.TEST_EMBEDDED_DATABASE_TEMPLATE; // set by database-setup.js
      if (!template) return; // a run on a server database builds no template
      const owner = Number(/^tpi-test-template-(\d+)-/.exec(basename(dirname(template)))?.[1]);
      // A worker's parent is the jest process; with --runInBand the suite runs in it.
      expect([process.ppid, process.pid]).toContain(owner);
      expect(removeAbandonedRuns(dirname(dirname(template)))).toEqual([]);
      expect(existsSync(template)).toBe(true);
    });
  });
});
