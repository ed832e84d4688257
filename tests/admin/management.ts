// What operators rely on: a server that shuts down without dropping requests in flight, and a management listener
// with Prometheus metrics, liveness and readiness that reflects real dependencies and shutdown.
import { describe, it, expect, afterEach } from '@jest/globals';
import express from 'express';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { listen, type Listening } from '../../common/http.js';
import { startManagement } from '../../common/management.js';
import { createTelemetry } from '../../common/telemetry.js';
import { createLogger } from '../../common/log.js';
import { startTestSystem } from '../support/system.js';

describe('management', () => {
  const open: Listening[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((l) => l.close(0)));
  });

  async function serve(handler: express.RequestHandler) {
    const http = await listen(0);
    open.push(http);
    http.server.on('request', express().use(handler));
    return http;
  }

  /** A promise and the function that resolves it: the handler says a request has arrived. */
  function signal() {
    let fire!: () => void;
    const fired = new Promise<void>((resolve) => (fire = resolve));
    return { fire, fired };
  }

  describe('graceful close', () => {
    it('lets a request in flight finish, then refuses new connections', async () => {
      const arrived = signal();
      const http = await serve(
        (_req, res) => (arrived.fire(), void sleep(300).then(() => res.json({ finished: true }))),
      );
      const inFlight = fetch(`${http.url}/slow`);
      await arrived.fired;
      const closing = http.close();
      const res = await inFlight;
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ finished: true });
      await closing;
      await expect(fetch(`${http.url}/after`)).rejects.toThrow();
    });

    it('closes an idle keep-alive connection instead of waiting for it to time out', async () => {
      const http = await serve((_req, res) => void res.json({ ok: true }));
      const agent = new Agent({ keepAliveTimeout: 600_000 });
      await (await request(`${http.url}/`, { dispatcher: agent })).body.json();
      // No deadline to fall back on: close completes only because the idle connection is closed (well within 10 s).
      const closed = await Promise.race([
        http.close(2 ** 31 - 1).then(() => 'closed'),
        sleep(10_000, undefined, { ref: false }).then(() => 'still open'),
      ]);
      expect(closed).toBe('closed');
      await agent.close();
    });

    it('cuts what is still open at the deadline', async () => {
      const arrived = signal();
      const http = await serve(() => arrived.fire()); // never answers
      const hanging = fetch(`${http.url}/never`).then(
        () => 'answered',
        (err: { cause?: { code?: string } }) => `cut (${err.cause?.code ?? 'no code'})`,
      );
      await arrived.fired;
      await http.close(200);
      // Cut after it was accepted (the connection reset or closed), not refused before it arrived.
      expect(await hanging).toMatch(/^cut \((?!ECONNREFUSED)/);
    });
  });

  describe('management listener', () => {
    it(
      'serves liveness, readiness from the registered checks once ' +
        'the service has started, and turns unready when draining',
      async () => {
        const telemetry = createTelemetry();
        let databaseUp = true;
        telemetry.addReadinessCheck('database', async () => {
          if (!databaseUp) throw new Error('connection refused');
        });
        const management = await startManagement(0, '127.0.0.1', telemetry);
        open.push(management);
        const get = async (path: string) => {
          const res = await fetch(`${management.url}${path}`);
          return { status: res.status, body: await res.json() };
        };

        expect(await get('/livez')).toEqual({ status: 200, body: { status: 'ok' } });
        // Still migrating or binding its port: alive, but nothing may be sent to it yet.
        expect(await get('/readyz')).toEqual({
          status: 503,
          body: { status: 'unready', checks: { database: 'ok', startup: 'starting' } },
        });
        telemetry.started();
        expect(await get('/readyz')).toEqual({ status: 200, body: { status: 'ready', checks: { database: 'ok' } } });
        databaseUp = false;
        expect(await get('/readyz')).toEqual({
          status: 503,
          body: { status: 'unready', checks: { database: 'connection refused' } },
        });
        databaseUp = true;
        telemetry.drain();
        expect(await get('/readyz')).toEqual({
          status: 503,
          body: { status: 'unready', checks: { database: 'ok', shutdown: 'draining' } },
        });
        expect((await get('/livez')).status).toBe(200);
      },
    );

    it('exports request counts and latencies by route template and status, never by raw path', async () => {
      const telemetry = createTelemetry();
      const app = express();
      app.get('/v1/persons/:personId', (_req, res) => void res.status(404).json({}));
      const api = await listen(0);
      open.push(api);
      api.server.on('request', telemetry.observe('backend', createLogger('backend', 'silent')));
      api.server.on('request', app);
      await fetch(`${api.url}/v1/persons/psn_01hzzzzzzzzzzzzzzzzzzzzzzz`);
      await fetch(`${api.url}/v1/persons/psn_01hyyyyyyyyyyyyyyyyyyyyyyy`);
      await fetch(`${api.url}/nowhere`);
      telemetry.decisions.inc({ outcome: 'deny', code: 'capability_not_granted' });

      const management = await startManagement(0, '127.0.0.1', telemetry);
      open.push(management);
      const text = await (await fetch(`${management.url}/metrics`)).text();
      expect(text).toContain(
        'http_requests_total{service="backend",method="GET",route="/v1/persons/:personId",status="404"} 2',
      );
      expect(text).toContain('http_requests_total{service="backend",method="GET",route="unmatched",status="404"} 1');
      expect(text).toMatch(
        /http_request_duration_seconds_bucket\{le="0.005",service="backend",method="GET",route="\/v1\/persons\/:personId",status="404"\} \d/,
      );
      expect(text).toContain('pdp_decisions_total{outcome="deny",code="capability_not_granted"} 1');
      expect(text).toContain('process_cpu_user_seconds_total');
      expect(text).not.toContain('psn_01h');
    });
  });

  describe('a whole system', () => {
    it(
      'is ready when every service reaches its dependencies, ' +
        'counts API traffic by route, and turns unready when draining',
      async () => {
        const system = await startTestSystem();
        try {
          const readiness = await system.telemetry.readiness();
          expect(readiness.ready).toBe(true);
          expect(Object.keys(readiness.checks).sort()).toEqual(
            [
              'backend: database',
              'gateway: database',
              'gateway: issuer key set',
              ...(process.env.REDIS_URL ? ['gateway: redis'] : []),
              'issuer: database',
              'policies: database',
            ].sort(),
          );
          await fetch(`${system.baseUrl}/me`, { headers: { authorization: 'Bearer not.a.token' } });
          const text = await system.telemetry.registry.metrics();
          expect(text).toContain('http_requests_total{service="gateway",method="GET",route="/v1/me",status="401"} 1');
          expect(text).toMatch(
            /http_requests_total\{service="issuer",method="GET",route="\/\.well-known\/jwks\.json",status="200"\} \d/,
          ); // the key set fetch
          system.telemetry.drain();
          expect((await system.telemetry.readiness()).checks.shutdown).toBe('draining');
        } finally {
          await system.close();
        }
      },
    );
  });
});
