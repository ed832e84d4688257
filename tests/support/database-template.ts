// Builds the migrated empty embedded database once per test run and prints where its dump is: every suite of an
// embedded run starts from a copy of it (tests/support/database.ts) instead of paying PostgreSQL's initdb and every
// migration again (about 2 s a suite, 1.5 of them saved). Run by jest's global setup (tests/support/database-setup.js).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { migrate, openDatabase } from '../../common/db.js';

const dir = mkdtempSync(join(tmpdir(), 'tpi-test-template-'));
const db = await openDatabase({ dataDir: join(dir, 'data') });
await migrate(db.knex);
await db.close();
const pglite = await PGlite.create(join(dir, 'data'));
const dump = await pglite.dumpDataDir('none');
await pglite.close();
writeFileSync(join(dir, 'migrated.tar'), Buffer.from(await dump.arrayBuffer()));
rmSync(join(dir, 'data'), { recursive: true, force: true });
process.stdout.write(join(dir, 'migrated.tar'));
