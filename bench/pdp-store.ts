// The PDP's fact reading and evaluation alone, without HTTP (issue 33): CPU µs per decision of this process and of its
// one PostgreSQL backend (from /proc: the server must run on this machine), for decisions asked `batch` at a time, all
// about one person's session, on a scratch database of the server DATABASE_URL names. Not part of `npm run bench`.
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/pdp-store.ts <batch (1)> <decisions (20000)>
import { readFileSync } from 'node:fs';
import { openDatabase, migrate } from '../common/db.js';
import { knexPolicyStore } from '../policies/store.js';
import { evaluate } from '../policies/evaluate.js';
import { scratchDatabase } from '../tests/support/database.js';
import { newId } from '../common/ids.js';
import type { DecisionInput } from '../wire/decision.js';

const [batch, total] = [Number(process.argv[2] ?? 1), Number(process.argv[3] ?? 20000)];
if (!process.env.DATABASE_URL) throw new Error('DATABASE_URL: a PostgreSQL server on this machine');
const scratch = await scratchDatabase(process.env.DATABASE_URL);
const db = await openDatabase({ databaseUrl: scratch.url, poolMax: 1 });
await migrate(db.knex);
const k = db.knex;
const [ten, psn, acc] = [newId('ten'), newId('psn'), newId('acc')];
const client = 'tp_micro_app';
await k('tenants').insert({ id: ten, label: 'micro', display_name: 'Micro', plan: 'L2' });
await k('persons').insert({ id: psn, display_name: 'P' });
await k('tenant_person_relationships').insert({ tenant_id: ten, person_id: psn });
await k('clients').insert({
  id: client,
  tenant_id: ten,
  slug: 'app',
  name: 'App',
  kind: 'third_party',
  type: 'public',
  redirect_uris: '[]',
});
await k('accounts').insert({ id: acc, tenant_id: ten, kind: 'person', person_id: psn });
await k('tenant_grants').insert({ tenant_id: ten, client_id: client, capability_id: 'svc.profile.self.read' });
await k('sessions').insert({ id: 'sid-micro', account_id: acc, client_id: client });
const input = {
  requestId: 'r',
  token: {
    sub: psn,
    client_id: client,
    tenant_id: ten,
    profile: 'self',
    scope: 'svc.profile.self.read',
    actor_account_id: acc,
    actor_epoch: 1,
    sid: 'sid-micro',
  },
  capability: 'svc.profile.self.read',
  resource: { type: 'self' },
} satisfies DecisionInput;
const store = knexPolicyStore(k);
const backend = Number((await k.raw('select pg_backend_pid() as p')).rows[0].p);
const backendUs = () => {
  const f = readFileSync(`/proc/${backend}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * 10_000;
};
const round = async (n: number) => {
  for (let i = 0; i < n / batch; i++) {
    const ds = await Promise.all(Array.from({ length: batch }, async () => evaluate(input, await store.facts(input))));
    if (!ds.every((d) => d.allow)) throw new Error(JSON.stringify(ds[0]));
  }
};
await round(2000); // warm-up: the facts are held from here on, and the code is optimized
const [cpu0, pg0, t0] = [process.cpuUsage(), backendUs(), performance.now()];
await round(total);
const cpu = process.cpuUsage(cpu0);
const [pg, ms] = [backendUs() - pg0, performance.now() - t0];
console.log(
  `batch ${batch}: node ${((cpu.user + cpu.system) / total).toFixed(1)} µs/decision, postgres backend ${(pg / total).toFixed(1)} µs/decision, ${(total / (ms / 1000)).toFixed(0)} decisions/s wall`,
);
await db.close();
await scratch.drop();
