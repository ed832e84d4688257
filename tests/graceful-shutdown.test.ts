// SIGTERM under load, to real processes: each service runs as its own process (`node --import tsx <service>/main.ts`,
// as the container image runs it) on one PostgreSQL (a throwaway database on DATABASE_URL, else a private server) and
// Redis when REDIS_URL is set. The test plays the load balancer: API calls keep coming through the gateway; when the
// gateway is told to stop, the balancer sends it nothing new, and the calls already sent must all be answered. The
// gateway's metering batch is set to flush only when it closes, so every acknowledged call must then have its usage
// row, and every call its decision-log row, written by the flushes at shutdown. Each process must end on its own
// with exit code 0 after saying it drained, flushed and closed its pools.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import knexFactory, { type Knex } from 'knex';
import { DEFAULT_GATEWAY_FILE } from '../gateway/gateway-file.js';
import { adminClient, setupTenant, type TenantSetup } from './support/admin.js';
import { scratchDatabase } from './support/database.js';
import { clientCredentialsToken } from './support/oauth.js';
import { Child, freePort, nodeEntry, privatePostgres, untilReady, type PrivatePostgres } from './support/processes.js';

const SERVICES = ['issuer', 'policies', 'backend', 'gateway'] as const;
type ServiceName = (typeof SERVICES)[number];
const INTERNAL_SECRET = 'graceful-shutdown-test-secret-0123456789';
const ADMIN_TOKEN = 'graceful-shutdown-operator-token-0123456789';
const WORKERS = 8;
const SLOW_CALLS = 4;

interface ServiceProcess {
  child: Child;
  managementUrl: string;
}

let postgres: PrivatePostgres | undefined;
let database: { url: string; drop(): Promise<void> };
let knex: Knex;
let ports: Record<ServiceName | `${ServiceName}Management`, number>;
const processes = new Map<ServiceName, ServiceProcess>();

/** The shipped gateway file with metering that writes only when the gateway closes. */
function gatewayFileFlushingOnlyOnClose(): string {
  const shipped = readFileSync(DEFAULT_GATEWAY_FILE, 'utf8');
  const metering = 'config: { batchSize: 200, flushIntervalMs: 1000 }';
  expect(shipped).toContain(metering);
  const file = join(mkdtempSync(join(tmpdir(), 'graceful-shutdown-')), 'gateway.yaml');
  writeFileSync(file, shipped.replace(metering, 'config: { batchSize: 10000, flushIntervalMs: 60000 }'));
  return file;
}

async function startService(name: ServiceName, env: Record<string, string>): Promise<ServiceProcess> {
  const child = new Child(name, ...nodeEntry(`${name}/main.ts`), { env: { ...process.env, ...env } });
  await child.start();
  return { child, managementUrl: `http://127.0.0.1:${ports[`${name}Management`]}` };
}

beforeAll(async () => {
  if (!process.env.DATABASE_URL) postgres = await privatePostgres();
  database = await scratchDatabase(process.env.DATABASE_URL ?? postgres!.url);
  knex = knexFactory({ client: 'pg', connection: database.url, pool: { min: 0, max: 2 } });
  const free = await Promise.all(SERVICES.flatMap(() => [freePort(), freePort()]));
  ports = Object.fromEntries(SERVICES.flatMap((s, i) => [[s, free[2 * i]!], [`${s}Management`, free[2 * i + 1]!]])) as typeof ports;
  const env = {
    DATABASE_URL: database.url, INTERNAL_SECRET, ADMIN_TOKEN, LOG_LEVEL: 'info', ISSUER_ENABLE_CLIENT_CREDENTIALS: 'true',
    AUTH_URL: `http://127.0.0.1:${ports.issuer}`, ISSUER_PORT: String(ports.issuer), PDP_PORT: String(ports.policies),
    BACKEND_PORT: String(ports.backend), GATEWAY_PORT: String(ports.gateway), GATEWAY_CONFIG: gatewayFileFlushingOnlyOnClose(),
  };
  // All four start at once on the fresh database and migrate it together (common/db.ts migrate: losers retry).
  for (const name of SERVICES) processes.set(name, await startService(name, { ...env, MANAGEMENT_PORT: String(ports[`${name}Management`]) }));
  await Promise.all([...processes.values()].map(({ child, managementUrl }) => untilReady(child, managementUrl)));
}, 180_000);

afterAll(async () => {
  await Promise.all([...processes.values()].map((p) => p.child.stop('SIGKILL')));
  await knex?.destroy();
  await database?.drop();
  await postgres?.destroy();
});

async function workloadToken(tenant: TenantSetup): Promise<string> {
  const admin = adminClient({ pdpUrl: `http://127.0.0.1:${ports.policies}`, adminToken: ADMIN_TOKEN });
  await admin.ok('POST', `/tenants/${tenant.tenantId}/service-accounts`, { clientId: tenant.clientId, name: 'load', capabilities: ['svc.tenant.info.read'] });
  return clientCredentialsToken(`http://127.0.0.1:${ports.issuer}`, { clientId: tenant.clientId, clientSecret: tenant.clientSecret! }, 'svc.tenant.info.read');
}

/**
 * A call in flight when SIGTERM arrives, on a connection the gateway has certainly accepted: a first call on it is
 * answered (keep-alive), then the second call's request line is sent, the rest of its headers only by `finish`, which
 * resolves to that call's status line.
 */
async function slowCall(token: string, requestId: string) {
  const socket = connect(ports.gateway, '127.0.0.1');
  let answer = '';
  socket.on('data', (chunk: Buffer) => void (answer += chunk.toString()));
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()).once('error', () => resolve()));
  const headers = `authorization: Bearer ${token}\r\nx-request-id: ${requestId}`;
  socket.write(`GET /v1/tenant HTTP/1.1\r\nhost: 127.0.0.1\r\n${headers}-first\r\n\r\n`);
  const length = () => Number(/content-length: (\d+)/i.exec(answer)?.[1]);
  while (!(answer.includes('\r\n\r\n') && Buffer.byteLength(answer.split('\r\n\r\n')[1]!) >= length())) {
    if (socket.closed) throw new Error(`connection closed before the first answer: ${answer}`);
    await sleep(10);
  }
  expect(answer.split('\r\n', 1)[0]).toBe('HTTP/1.1 200 OK');
  answer = '';
  socket.write('GET /v1/tenant HTTP/1.1\r\nhost: 127.0.0.1\r\n');
  return {
    async finish(): Promise<string> {
      socket.write(`${headers}\r\nconnection: close\r\n\r\n`);
      await ended;
      return answer.split('\r\n', 1)[0]!;
    },
  };
}

describe('SIGTERM under load', () => {
  it('answers every call in flight, flushes metering and decision logs, and every process exits cleanly', async () => {
    const tenant = await setupTenant(adminClient({ pdpUrl: `http://127.0.0.1:${ports.policies}`, adminToken: ADMIN_TOKEN }), { type: 'confidential' });
    const token = await workloadToken(tenant);
    const run = Date.now().toString(36);
    const acknowledged: string[] = [];
    const failed: string[] = [];
    let sending = true;
    let sent = 0;
    const worker = async () => {
      while (sending) {
        const id = `shutdown-${run}-${++sent}`;
        try {
          const res = await fetch(`http://127.0.0.1:${ports.gateway}/v1/tenant`, { headers: { authorization: `Bearer ${token}`, 'x-request-id': id } });
          await res.arrayBuffer();
          (res.status === 200 ? acknowledged : failed).push(res.status === 200 ? id : `${id}: ${res.status}`);
        } catch (err) {
          failed.push(`${id}: ${String((err as { cause?: unknown }).cause ?? err)}`);
        }
      }
    };
    const workers = Array.from({ length: WORKERS }, worker);
    while (acknowledged.length < 100 && failed.length === 0) await sleep(50);

    // Under load: calls in flight on the gateway, then SIGTERM; the balancer stops sending it new calls.
    const slowIds = Array.from({ length: SLOW_CALLS }, (_, i) => `shutdown-${run}-slow-${i}`);
    const slow = await Promise.all(slowIds.map(async (id) => ({ id, call: await slowCall(token, id) })));
    acknowledged.push(...slow.map((s) => `${s.id}-first`));
    await sleep(200);
    const gateway = processes.get('gateway')!;
    sending = false;
    const gatewayStopped = gateway.child.stop('SIGTERM');
    await Promise.all(workers);

    // Draining: unready, not accepting new connections, the calls in flight still answered.
    const readiness = await fetch(`${gateway.managementUrl}/readyz`);
    expect({ status: readiness.status, body: await readiness.json() }).toMatchObject({ status: 503, body: { checks: { shutdown: 'draining' } } });
    const connecting = connect(ports.gateway, '127.0.0.1');
    expect(await new Promise((resolve) => connecting.once('error', (err: NodeJS.ErrnoException) => resolve(err.code)).once('connect', () => resolve('accepted')))).toBe('ECONNREFUSED');
    const slowAnswers = await Promise.all(slow.map((s) => s.call.finish()));
    expect(slowAnswers).toEqual(slow.map(() => 'HTTP/1.1 200 OK'));
    acknowledged.push(...slow.map((s) => s.id));
    expect(failed).toEqual([]);

    // Then the services behind it, as a rollout or a node drain would.
    await gatewayStopped;
    expect(gateway.child.process.exitCode).toBe(0);
    await Promise.all((['policies', 'backend', 'issuer'] as const).map((name) => processes.get(name)!.child.stop('SIGTERM')));
    for (const name of SERVICES) {
      const { child } = processes.get(name)!;
      expect({ name, code: child.process.exitCode }).toEqual({ name, code: 0 });
      expect({ name, stopped: child.output.includes('stopped: requests drained, batches flushed, pools closed') }).toEqual({ name, stopped: true });
    }

    // Nothing lost: a usage row for every acknowledged call (metering flushed only at close), a decision for each.
    const usage = await knex('usage_records').where('tenant_id', tenant.tenantId).pluck('request_id');
    expect(usage.sort()).toEqual([...acknowledged].sort());
    const decisions = await knex('decision_logs').where('tenant_id', tenant.tenantId).pluck('request_id');
    expect(new Set(decisions)).toEqual(new Set(acknowledged));
    expect(acknowledged.length).toBeGreaterThanOrEqual(100 + SLOW_CALLS);
  }, 120_000);
});
