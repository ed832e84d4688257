// `npm run migrate`: applies the migrations to DATABASE_URL (services also migrate at start).
import { loadConfig } from '../common/config.js';
import { migrate, openDatabase } from '../common/db.js';
import { exitOnStartError } from '../common/service.js';

const config = loadConfig();
if (!config.DATABASE_URL) {
  console.error('DATABASE_URL must be set; the embedded database is migrated by the services themselves');
  process.exit(2);
}
const db = await openDatabase({ databaseUrl: config.DATABASE_URL }).catch(exitOnStartError('migrate'));
await migrate(db.knex);
await db.close();
console.log('migrations applied');
