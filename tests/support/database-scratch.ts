// Where an embedded test run keeps its migrated template database and the suites' copies of it
// (tests/support/database-template.ts), and the removal of what an interrupted run left there: a run stopped before
// jest's global teardown (Ctrl-C, a killed CI job) would otherwise leave ~40 MB on /dev/shm, which is memory, until
// the machine restarts.
import { readdirSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const PREFIX = 'tpi-test-template-';
/** A run's directory: the prefix, the pid of the jest process that owns the run, and mkdtemp's random suffix. */
const RUN_DIRECTORY = new RegExp(`^${PREFIX}(\\d+)-`);

/**
 * /dev/shm when it has room for the few suites that run at once (~40 MB each), so a copy and PostgreSQL's writes and
 * fsyncs cost no disk; elsewhere the system's temporary directory.
 */
export function scratchRoot(): string {
  try {
    const { bavail, bsize } = statfsSync('/dev/shm');
    if (bavail * bsize >= 1024 ** 3) return '/dev/shm';
  } catch {
    // No /dev/shm on this system.
  }
  return tmpdir();
}

/** The mkdtemp prefix of the directory of a run owned by the jest process `ownerPid`. */
export const runDirectoryPrefix = (ownerPid: number): string => `${PREFIX}${ownerPid}-`;

/** Removes, under `root`, the directories of runs whose jest process is gone; returns their names. */
export function removeAbandonedRuns(root: string): string[] {
  const removed: string[] = [];
  for (const name of readdirSync(root)) {
    const owner = RUN_DIRECTORY.exec(name)?.[1];
    if (owner === undefined || isRunning(Number(owner))) continue;
    rmSync(join(root, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}

/** Signal 0 checks that a process exists without touching it; EPERM means it exists under another user. */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
