// `npm run bench`, extension records: one read and one write of a single record with 1,000 and then 1,000,000 records
// of the extension stored, measured on the backend directly (the part whose cost could grow with the data).
// Seeding is one INSERT ... SELECT generate_series per table and size step.
import { performance } from 'node:perf_hooks';
import type { Knex } from 'knex';
import { Pool } from 'undici';
import { CONTEXT_HEADER, INTERNAL_SECRET_HEADER, encodeContext } from '../../common/internal-context.js';

export interface LoopResult {
  name: string;
  rps: number;
  p50: number;
  p99: number;
}

export interface ExtensionBenchSetup {
  knex: Knex;
  backendUrl: string;
  internalSecret: string;
  tenantId: string;
  clientId: string;
  extensionId: string;
  connections: number;
  durationS: number;
}

/** Seeded person ids: digits only, which the contract's id alphabet contains. */
const personSql = (g: string) => `'psn_' || lpad(${g}::text, 26, '0')`;
const personId = (n: number) => `psn_${String(n).padStart(26, '0')}`;
const ROUNDS = 3;

/** Stores records for persons from+1..to (persons created alongside) and keeps the quota counter equal to them. */
async function seed(s: ExtensionBenchSetup, from: number, to: number): Promise<void> {
  await s.knex.raw(`insert into persons (id, display_name) select ${personSql('g')}, 'Bench person ' || g from generate_series(?::int, ?::int) g`, [from + 1, to]);
  await s.knex.raw(
    `insert into person_extensions (tenant_id, person_id, extension_id, schema_version, data, etag, updated_by, created_at, updated_at)
     select ?, ${personSql('g')}, ?, 1, '{"note":"seed"}', '"seed-' || g || '"', ?, now(), now() from generate_series(?::int, ?::int) g`,
    [s.tenantId, s.extensionId, s.clientId, from + 1, to],
  );
  await s.knex.raw(
    `insert into extension_record_counts (tenant_id, extension_id, records) values (?, ?, ?)
     on conflict (tenant_id, extension_id) do update set records = extension_record_counts.records + excluded.records`,
    [s.tenantId, s.extensionId, to - from],
  );
  // Steady state before measuring: visibility map and statistics current, dirty pages written, so neither autovacuum
  // nor a checkpoint of the bulk insert lands inside a measurement.
  await s.knex.raw('vacuum analyze persons, person_extensions');
  await s.knex.raw('checkpoint');
}

/** `connections` loops, each awaiting one request after another until the time is up; every answer must be 2xx. */
async function loop(name: string, s: ExtensionBenchSetup, send: (pool: Pool, connection: number) => Promise<number>): Promise<LoopResult> {
  const pool = new Pool(s.backendUrl, { connections: s.connections });
  const latencies: number[] = [];
  const deadline = performance.now() + s.durationS * 1000;
  try {
    await Promise.all(Array.from({ length: s.connections }, async (_, c) => {
      while (performance.now() < deadline) {
        const start = performance.now();
        const status = await send(pool, c);
        if (status >= 300) throw new Error(`${name}: status ${status}`);
        latencies.push(performance.now() - start);
      }
    }));
  } finally {
    await pool.close();
  }
  latencies.sort((a, b) => a - b);
  const at = (q: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]! * 10) / 10;
  return { name, rps: latencies.length / s.durationS, p50: at(0.5), p99: at(0.99) };
}

/** Read and write figures at 1,000 and at `large` stored records. */
export async function benchExtensionRecords(s: ExtensionBenchSetup, large = 1_000_000): Promise<LoopResult[]> {
  const headers = {
    [INTERNAL_SECRET_HEADER]: s.internalSecret,
    'content-type': 'application/json',
    [CONTEXT_HEADER]: encodeContext({
      requestId: 'bench-extensions', subjectType: 'service_account', subjectId: 'acc_bench', tenantId: s.tenantId,
      clientId: s.clientId, actorAccountId: 'acc_bench', scopes: ['svc.person.metadata.read', 'svc.person.metadata.write'],
    }),
  };
  const path = (n: number) => `/v1/persons/${personId(n)}/extensions/${s.extensionId}`;
  // Each write connection replaces its own record, carrying the ETag of its last answer (compare-and-set).
  const etags = new Map<number, string>();
  const read = (pool: Pool) => pool.request({ method: 'GET', path: path(1), headers }).then(async (r) => (await r.body.dump(), r.statusCode));
  const write = async (pool: Pool, c: number) => {
    const n = c + 2;
    const r = await pool.request({
      method: 'PUT', path: path(n), headers: { ...headers, 'if-match': etags.get(n) ?? `"seed-${n}"` },
      body: JSON.stringify({ schemaVersion: 1, data: { note: `write ${c}` } }),
    });
    const body = await r.body.text();
    if (r.statusCode === 200) etags.set(n, JSON.parse(body).etag);
    return r.statusCode;
  };

  const results: LoopResult[] = [];
  for (const [from, to] of [[0, 1_000], [1_000, large]] as const) {
    await seed(s, from, to);
    // Unmeasured warm-up (JIT, pooled connections, the validator cache), so both sizes are measured warm.
    if (from === 0) for (const send of [read, write]) await loop('warm-up', { ...s, durationS: Math.min(2, s.durationS) }, send);
    const size = to.toLocaleString('en');
    // Best of ROUNDS, reads and writes alternating: on a shared machine the best round is the one least disturbed.
    const rounds: LoopResult[][] = [];
    for (let i = 0; i < ROUNDS; i++) rounds.push([await loop(`extension GET (${size} rec)`, s, read), await loop(`extension PUT (${size} rec)`, s, write)]);
    for (const op of [0, 1]) results.push(rounds.map((r) => r[op]!).reduce((best, r) => (r.rps > best.rps ? r : best)));
  }
  return results;
}

/** One line per operation: throughput at the large size as a share of the throughput at 1,000 records. */
export function compareSizes(results: LoopResult[]): string[] {
  const [read1k, write1k, readLarge, writeLarge] = results;
  return [['read', read1k!, readLarge!], ['write', write1k!, writeLarge!]].map(
    ([op, small, large]) => `extension ${op}: ${(((large as LoopResult).rps / (small as LoopResult).rps) * 100).toFixed(0)}% of the 1,000-record throughput`,
  );
}
