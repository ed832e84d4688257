// Builds the migrated empty embedded database once per test run and prints its data directory: every suite of an
// embedded run opens a copy of it (tests/support/database.ts) instead of paying PostgreSQL's initdb and every
// migration again. Run by jest's global setup (tests/support/database-setup.js), whose process owns the run and whose
// teardown removes the directory, the suites' copies with it; what runs stopped before their teardown left is removed
// first (tests/support/database-scratch.ts).
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { migrate, openDatabase } from '../../common/db.js';
import { removeAbandonedRuns, runDirectoryPrefix, scratchRoot } from './database-scratch.js';

const root = scratchRoot();
removeAbandonedRuns(root);
const dir = mkdtempSync(join(root, runDirectoryPrefix(process.ppid)));
const db = await openDatabase({ dataDir: join(dir, 'migrated') });
await migrate(db.knex);
await db.close();
process.stdout.write(join(dir, 'migrated'));
