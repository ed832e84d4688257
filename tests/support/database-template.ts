// Builds the migrated empty embedded database once per test run and prints its data directory: every suite of an
// embedded run opens a copy of it (tests/support/database.ts) instead of paying PostgreSQL's initdb and every
// migration again. Run by jest's global setup (tests/support/database-setup.js), which removes the directory after the
// run, the suites' copies with it.
import { mkdtempSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate, openDatabase } from '../../common/db.js';

/**
 * Copies live in memory on /dev/shm when it has room for the few suites that run at once (~40 MB each), so a copy and
 * PostgreSQL's writes and fsyncs cost no disk; elsewhere the system's temporary directory.
 */
function scratchRoot(): string {
  try {
    const { bavail, bsize } = statfsSync('/dev/shm');
    if (bavail * bsize >= 1024 ** 3) return '/dev/shm';
  } catch {
    // No /dev/shm on this system.
  }
  return tmpdir();
}

const dir = mkdtempSync(join(scratchRoot(), 'tpi-test-template-'));
const db = await openDatabase({ dataDir: join(dir, 'migrated') });
await migrate(db.knex);
await db.close();
process.stdout.write(join(dir, 'migrated'));
