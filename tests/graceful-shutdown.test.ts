// SIGTERM under load, to real processes: each service runs as its own process (`node --import tsx <service>/main.ts`,
// as the container image runs it) on one PostgreSQL (a throwaway database on DATABASE_URL, else a private server) and
// Redis when REDIS_URL is set. The test plays the load balancer: API calls keep coming through the gateway; when the
// gateway is told to stop, the balancer sends it nothing new, and the calls already sent must all be answered. The
// gateway's metering batch is set to flush only when it closes, so every acknowledged call must then have its usage
// row, and every call its decision-log row, written by the flushes at shutdown. Each process must end on its own
// with exit code 0 after saying it drained, flushed and closed its pools.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import knexFactory, { type Knex } from 'knex';
import { adminClient, setupTenant, type TenantSetup } from './support/admin.js';
import { realPostgresDatabase } from './support/database.js';
import { editedGatewayFile, gatewayFileDirectory } from './support/gateway-files.js';
import { clientCredentialsToken } from './support/oauth.js';
import { SERVICES, startProcesses, type ProcessSystem } from './support/processes.js';

const WORKERS = 8;
const SLOW_CALLS = 4;

let database: { url: string; drop(): Promise<void> };
let knex: Knex;
let system: ProcessSystem;
const files = gatewayFileDirectory('graceful-shutdown');

/** The shipped gateway file with metering that writes only when the gateway closes. */
const gatewayFileFlushingOnlyOnClose = () =>
  files.write(
    editedGatewayFile(
      'config: { batchSize: 200, flushIntervalMs: 1000 }',
      'config: { batchSize: 10000, flushIntervalMs: 60000 }',
    ),
  );

beforeAll(async () => {
  database = await realPostgresDatabase();
  knex = knexFactory({ client: 'pg', connection: database.url, pool: { min: 0, max: 2 } });
  // All four start at once on the fresh database and migrate it together (common/db.ts migrate: losers retry).
  system = await startProcesses({
    databaseUrl: database.url,
    redisUrl: process.env.REDIS_URL,
    together: true,
    settings: { ISSUER_ENABLE_CLIENT_CREDENTIALS: 'true', GATEWAY_CONFIG: gatewayFileFlushingOnlyOnClose() },
  });
}, 180_000);

afterAll(async () => {
  if (system) await Promise.all(SERVICES.map((s) => system.services[s].stop('SIGKILL')));
  await knex?.destroy();
  await database?.drop();
  files.remove();
});

const gatewayPort = () => Number(new URL(system.gatewayUrl).port);

async function workloadToken(tenant: TenantSetup): Promise<string> {
  const admin = adminClient(system);
  await admin.ok('POST', `/tenants/${tenant.tenantId}/service-accounts`, {
    clientId: tenant.clientId,
    name: 'load',
    capabilities: ['svc.tenant.info.read'],
  });
  return clientCredentialsToken(
    system.authUrl,
    { clientId: tenant.clientId, clientSecret: tenant.clientSecret! },
    'svc.tenant.info.read',
  );
}

/**
 * A call in flight when SIGTERM arrives, on a connection the gateway has certainly accepted: a first call on it is
 * answered (keep-alive), then the second call's request line is sent, the rest of its headers only by `finish`, which
 * resolves to that call's status line.
 */
async function slowCall(token: string, requestId: string) {
  const socket = connect(gatewayPort(), '127.0.0.1');
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
    const tenant = await setupTenant(adminClient(system), { type: 'confidential' });
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
          const res = await fetch(`${system.baseUrl}/tenant`, {
            headers: { authorization: `Bearer ${token}`, 'x-request-id': id },
          });
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
    const gateway = system.services.gateway;
    sending = false;
    const gatewayStopped = gateway.stop('SIGTERM');
    await Promise.all(workers);

    // Draining: unready, not accepting new connections, the calls in flight still answered.
    const readiness = await fetch(`${system.managementUrls.gateway}/readyz`);
    expect({ status: readiness.status, body: await readiness.json() }).toMatchObject({
      status: 503,
      body: { checks: { shutdown: 'draining' } },
    });
    const connecting = connect(gatewayPort(), '127.0.0.1');
    expect(
      await new Promise((resolve) =>
        connecting
          .once('error', (err: NodeJS.ErrnoException) => resolve(err.code))
          .once('connect', () => resolve('accepted')),
      ),
    ).toBe('ECONNREFUSED');
    const slowAnswers = await Promise.all(slow.map((s) => s.call.finish()));
    expect(slowAnswers).toEqual(slow.map(() => 'HTTP/1.1 200 OK'));
    acknowledged.push(...slow.map((s) => s.id));
    expect(failed).toEqual([]);

    // Then the services behind it, as a rollout or a node drain would.
    await gatewayStopped;
    expect(gateway.process.exitCode).toBe(0);
    await Promise.all(
      (['policies', 'backend', 'issuer'] as const).map((name) => system.services[name].stop('SIGTERM')),
    );
    for (const name of SERVICES) {
      const child = system.services[name];
      expect({ name, code: child.process.exitCode }).toEqual({ name, code: 0 });
      expect({
        name,
        stopped: child.output.includes('stopped: requests drained, batches flushed, pools closed'),
      }).toEqual({ name, stopped: true });
    }

    // Nothing lost: a usage row for every acknowledged call (metering flushed only at close), a decision for each.
    const usage = await knex('usage_records').where('tenant_id', tenant.tenantId).pluck('request_id');
    expect(usage.sort()).toEqual([...acknowledged].sort());
    const decisions = await knex('decision_logs').where('tenant_id', tenant.tenantId).pluck('request_id');
    expect(new Set(decisions)).toEqual(new Set(acknowledged));
    expect(acknowledged.length).toBeGreaterThanOrEqual(100 + SLOW_CALLS);
  }, 120_000);
});
