// Builds the migrated empty embedded database once per test run and prints its data directory: every suite of an
// embedded run opens a copy of it (tests/support/database.ts) instead of paying PostgreSQL's initdb and every
// migration again. Run by jest's global setup (tests/support/database-setup.js) as
// `database-template.ts <pid of the jest process that owns the run>`: that process's teardown removes the directory,
// the suites' copies with it, and the directory carries its pid so that another run removes it only once that process
// is gone (tests/support/database-scratch.ts). The owner is named, not taken from process.ppid: tsx runs this script in
// a child of its own, so the parent here is tsx's launcher, which exits as soon as the template is built.
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { migrate, openDatabase } from '../../common/db.js';
import { removeAbandonedRuns, runDirectoryPrefix, scratchRoot } from './database-scratch.js';

const owner = Number(process.argv[2]);
if (!Number.isInteger(owner) || owner <= 0) throw new Error('usage: database-template.ts <owner pid>');
const root = scratchRoot();
removeAbandonedRuns(root);
const dir = mkdtempSync(join(root, runDirectoryPrefix(owner)));
const db = await openDatabase({ dataDir: join(dir, 'migrated') });
await migrate(db.knex);
await db.close();
process.stdout.write(join(dir, 'migrated'));
