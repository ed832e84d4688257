// `npx tsx bench/console-pages.ts`: how fast the console's persons list, person search and audit pages answer in a
// tenant of 100,000 persons and 10,000 audit entries (issue 51: the pages must stay as fast as before). Seeds with one
// INSERT ... SELECT generate_series per table, signs in with a tenant admin key as a browser would (the sign-in form's
// CSRF token and cookie), then times each page ROUNDS times one after another (after WARMUP untimed requests); prints median and 95th percentile in ms.
// DATABASE_URL set: PostgreSQL; unset: embedded PGlite. PERSONS and AUDIT_ENTRIES change the sizes.
import { performance } from 'node:perf_hooks';
import { startTestSystem } from '../tests/support/system.js';
import { adminClient, setupTenant } from '../tests/support/admin.js';
import { consoleOf } from '../tests/support/console.js';

const PERSONS = Number(process.env.PERSONS ?? 100_000);
const AUDIT_ENTRIES = Number(process.env.AUDIT_ENTRIES ?? 10_000);
const ROUNDS = 30;
/** Untimed requests a page first, so that no page's figures include V8 compiling its code. */
const WARMUP = 5;

const idSql = (prefix: string, g: string) => `'${prefix}_' || lpad(${g}::text, 26, '0')`;

const system = await startTestSystem();
try {
  const operator = adminClient(system);
  const tenant = await setupTenant(operator);
  const { key } = await operator.ok('POST', `/tenants/${tenant.tenantId}/admin-keys`);
  const started = performance.now();
  const step = (what: string) => console.log(`${what}: ${Math.round(performance.now() - started)} ms`);
  // Without the triggers that note each changed row for the PDP (migrations 011 and 013): the seeded rows are new,
  // and a note per row would make seeding take minutes. session_replication_role needs the superuser both have.
  await system.db.knex.transaction(async (knex) => {
    await knex.raw('set local session_replication_role = replica');
    await knex.raw(
      `insert into persons (id, display_name) select ${idSql('psn', 'g')}, 'Person ' || g from generate_series(1, ?::int) g`,
      [PERSONS],
    );
    step('persons');
    await knex.raw(
      `insert into accounts (id, tenant_id, kind, person_id, username, username_folded, password_hash)
       select ${idSql('acc', 'g')}, ?, 'person', ${idSql('psn', 'g')}, 'user-' || g, 'user-' || g, 'x'
       from generate_series(1, ?::int) g`,
      [tenant.tenantId, PERSONS],
    );
    step('accounts');
    await knex.raw(
      `insert into tenant_person_relationships (tenant_id, person_id) select ?, ${idSql('psn', 'g')} from generate_series(1, ?::int) g`,
      [tenant.tenantId, PERSONS],
    );
    await knex('persons')
      .where('id', `psn_${'7'.padStart(26, '0')}`)
      .update({ display_name: 'Bob Builder' });
    await knex.raw(
      `insert into admin_audit (at, tenant_id, actor_kind, actor_key_id, action, target_type, target_id, changes, request_id, ip, hash)
       select now() - (g || ' seconds')::interval, ?, 'operator', null,
         case g % 3 when 0 then 'account.disable' when 1 then 'account.enable' else 'person.create' end,
         case g % 3 when 2 then 'person' else 'account' end,
         case g % 3 when 2 then ${idSql('psn', 'g')} else ${idSql('acc', 'g')} end,
         '{"status": {"from": "active", "to": "disabled"}}', 'req-' || g, '127.0.0.1', 'seeded'
       from generate_series(1, ?::int) g`,
      [tenant.tenantId, AUDIT_ENTRIES],
    );
    step('audit entries');
  });
  await system.db.knex.raw('vacuum analyze persons, accounts, tenant_person_relationships, admin_audit');
  console.log(
    `seeded ${PERSONS} persons and ${AUDIT_ENTRIES} audit entries in ${Math.round(performance.now() - started)} ms`,
  );

  // Sign in as the browser does: the form's token, with the cookie that vouches for it.
  const base = consoleOf(system.pdpUrl);
  const form = await fetch(`${base}/sign-in`);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
  const signInCookie = form.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const signedIn = await fetch(`${base}/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: signInCookie },
    body: new URLSearchParams({ _csrf: csrf, key }),
  });
  const cookie = signedIn.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');

  const pages: Record<string, string> = {
    'persons, first page': 'persons',
    'persons, search "bui" (one match)': 'persons?q=bui',
    'persons, search "user-9999" (11 matches)': 'persons?q=user-9999',
    'persons, search "nobody" (no match)': 'persons?q=nobody',
    'persons, search "99" (two characters)': 'persons?q=99',
    'audit, first page': 'audit',
    'audit, action filter': 'audit?action=person.create',
  };
  for (const [name, path] of Object.entries(pages)) {
    const url = `${base}/tenants/${tenant.tenantId}/${path}`;
    const times: number[] = [];
    for (let i = 0; i < WARMUP + ROUNDS; i++) {
      const start = performance.now();
      const res = await fetch(url, { headers: { cookie } });
      await res.text();
      if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
      if (i >= WARMUP) times.push(performance.now() - start);
    }
    times.sort((a, b) => a - b);
    const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(1);
    console.log(`${name.padEnd(44)} median ${at(0.5).padStart(7)} ms   p95 ${at(0.95).padStart(7)} ms`);
  }
} finally {
  await system.close();
}
