// Issue 12, faults of the stores under traffic: the private PostgreSQL cluster crashed (immediate shutdown) and
// restarted, then hung (every process paused) and continued; the private Redis stopped and restarted; every service
// its own process. Prints its figures ("faults:" lines). Issue 48, the revision feed's faults: while PostgreSQL hangs
// a PDP decides from the facts the feed vouches for and nothing else; a change committed while a PDP cannot reach
// PostgreSQL (a second PDP behind a frozen connection) is never missed; with the feed unreadable (Redis stopped) the
// PDP reads the revision from PostgreSQL.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { callApi } from './support/api.js';
import { setupTenant, type TenantSetup } from './support/admin.js';
import { issuerSigningKey, signRaw, type SigningKey } from './support/hostile-tokens.js';
import { startStack, type Stack } from './support/stack.js';
import { Child, freePorts, nodeEntry, printFigures, sleep, untilReady, waitFor } from './support/processes.js';
import { tcpProxy, type TcpProxy } from './support/tcp-proxy.js';
import { dpopCall, dpopChallenge, dpopKey, makeProof } from './support/dpop.js';
import { trafficAround, writeLedger } from './support/write-ledger.js';
import { contextSigner } from '../common/internal-context.js';
import { openDatabase, type Database } from '../common/db.js';
import { createLogger } from '../common/log.js';
import { FEED_TRUST_MS, openRevisionFeed } from '../common/revision-feed.js';

let stack: Stack;
/** The issuer's signing key (ISSUER_JWKS): the tests sign the access tokens of the tenants they make. */
let issuerKey: SigningKey;
/**
 * The test's own handle on the stack's database (sessions inserted as the issuer's consent does), publishing to the
 * feed; opened on first use, after the crash test has restarted the database.
 */
let db: Database | undefined;
async function database(): Promise<Database> {
  if (!db) {
    db = await openDatabase({ databaseUrl: stack.system.databaseUrl });
    await openRevisionFeed(db, { REDIS_URL: stack.redisUrl, REDIS_CLUSTER: false }, createLogger('test', 'silent'));
  }
  return db;
}

beforeAll(async () => {
  const { key, jwks } = await issuerSigningKey();
  issuerKey = key;
  stack = await startStack({ persons: 8, settings: { ISSUER_JWKS: jwks } });
}, 180_000);
afterAll(async () => {
  await db?.close();
  await stack?.close();
});

/** The gateway's PDP deadline (gateway.yaml authorize timeoutMs); a loaded machine gets 4 s more. */
const PDP_DEADLINE_MS = 2000;
const DEADLINE_SLACK_MS = 4000;

/** A tenant of its own with a consented session of its person and an access token of it, signed as the issuer signs. */
async function consentedTenant(
  capabilities = ['svc.profile.self.read', 'svc.person.read'],
  claims: Record<string, unknown> = {},
) {
  const t = await setupTenant(stack.admin, { capabilities });
  const sid = `sid-faults-${randomUUID()}`;
  // As the issuer's consent inserts it (issuer/interactions.ts).
  await (await database()).knex('sessions').insert({ id: sid, account_id: t.accountId, client_id: t.clientId });
  const now = Math.floor(Date.now() / 1000);
  const token = await signRaw(
    decodeProtectedHeader(stack.token),
    {
      ...(decodeJwt(stack.token) as Record<string, unknown>),
      sub: t.personId,
      client_id: t.clientId,
      tenant_id: t.tenantId,
      actor_account_id: t.accountId,
      actor_epoch: 1,
      sid,
      scope: capabilities.join(' '),
      jti: randomUUID(),
      iat: now,
      exp: now + 900,
      ...claims,
    },
    issuerKey.privateKey,
  );
  return { t, token };
}

interface Answer {
  status: number;
  error: string | undefined;
  retryAfter: boolean;
  ms: number;
}

/** One API call through the gateway at `baseUrl`: its status, error code, whether it carries retry-after, its time. */
async function answer(baseUrl: string, operationId: string, path: string, token: string): Promise<Answer> {
  const started = performance.now();
  const res = await callApi(baseUrl, operationId, path, token);
  return {
    status: res.status,
    error: (res.body as { error?: string }).error,
    retryAfter: res.headers.get('retry-after') !== null,
    ms: performance.now() - started,
  };
}

/** The contract's answer when the decision cannot be made from current facts. */
const UNAVAILABLE = { status: 503, error: 'authorization_unavailable', retryAfter: true };
const shape = ({ status, error, retryAfter }: Answer) => ({ status, error, retryAfter });

/**
 * A change published to the feed, so that each PDP's next batch reads the database's revision afresh: its trust in the
 * feed then starts now (a display name of a tenant of its own; no decision under test depends on it).
 */
async function freshReading(): Promise<void> {
  const other = await stack.admin.ok('POST', '/tenants', {
    label: `nudge${randomUUID().slice(0, 8)}`,
    displayName: 'Nudge',
    plan: 'L1',
  });
  await stack.admin.ok('PATCH', `/tenants/${other.tenantId}`, { displayName: 'Nudged' });
}

describe('PostgreSQL crashed and restarted under traffic', () => {
  // The gateway's deadlines (gateway.yaml): the PDP decision 2 s, the backend 5 s; a loaded machine gets 3 s more.
  const CHAIN_DEADLINE_MS = 2000 + 5000 + 3000;

  /** The backend called directly, with the context the gateway would sign: its own answer, not the gateway's. */
  async function backendDirect(): Promise<number> {
    const path = `/v1/persons/${stack.tenant.personId}`;
    const requestId = `direct-${Date.now()}`;
    const headers = contextSigner(stack.system.internalSecret)(
      {
        requestId,
        subjectType: 'person',
        subjectId: stack.tenant.personId,
        tenantId: stack.tenant.tenantId,
        clientId: stack.tenant.clientId,
        actorAccountId: stack.tenant.accountId,
        scopes: ['svc.person.read'],
      },
      { method: 'GET', path },
    );
    const res = await fetch(`${stack.system.backendUrl}${path}`, {
      headers: { ...headers, 'x-request-id': requestId },
    });
    const body = await res.json();
    return res.status === 503 && body.error === 'authorization_unavailable' && res.headers.get('retry-after')
      ? 503
      : res.status;
  }

  /** A form POSTed to the issuer: its status, error and retry-after. */
  async function postForm(
    path: string,
    form: Record<string, string>,
    headers: Record<string, string> = {},
  ): Promise<string> {
    const res = await fetch(`${stack.system.authUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(form).toString(),
    });
    const text = await res.text();
    return (
      `${res.status} ${text ? (JSON.parse(text).error ?? 'token') : 'empty'} ` +
      `retry-after ${res.headers.get('retry-after')}`
    );
  }
  /** The authorize step a browser opens (its first page): status and retry-after. */
  async function authorizePage(): Promise<string> {
    const url = new URL(`${stack.system.authUrl}/oauth2/authorize`);
    url.search = new URLSearchParams({
      client_id: stack.tenant.clientId,
      redirect_uri: stack.tenant.redirectUri,
      response_type: 'code',
      scope: 'svc.profile.self.read',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    }).toString();
    const res = await fetch(url, { redirect: 'manual' });
    return `${res.status} ${res.headers.get('content-type')?.split(';')[0]} retry-after ${res.headers.get('retry-after')}`;
  }
  /** An API call from a browser app's origin with a token that is not valid: status and error. */
  async function apiFromBrowser(): Promise<string> {
    const res = await fetch(`${stack.system.baseUrl}/me`, {
      headers: { origin: 'https://app.example', authorization: 'Bearer not.a-valid.token' },
    });
    return `${res.status} ${(await res.json()).error}`;
  }
  /** A refresh grant with the stack's refresh token. */
  const refresh = (headers: Record<string, string> = {}) =>
    postForm(
      '/oauth2/token',
      { grant_type: 'refresh_token', client_id: stack.tenant.clientId, refresh_token: stack.refreshToken },
      headers,
    );

  it(
    'answers 503 from the PDP and the backend while it is down, no request outlives its deadline, ' +
      'everything recovers without a restart, and no committed write is lost or doubled',
    async () => {
      const postgres = stack.postgres!;
      const ledger = writeLedger(stack.system.baseUrl, () => stack.token, stack.extensionId, stack.personIds, 'pg');
      let whileDown: Record<string, number | string> = {};
      let startMs = 0;
      let recoveredMs = 0;
      const outcomes = await trafficAround(
        ledger,
        async () => {
          // immediate shutdown: a crash, recovered from the WAL at the next start
          await postgres.server.stop('SIGQUIT');
          await sleep(1000);
          whileDown = {
            backend: await backendDirect(),
            admin: (await stack.admin.call('GET', `/tenants/${stack.tenant.tenantId}/usage`)).status,
            token: await refresh(),
            tokenFromBrowser: await refresh({ origin: 'https://app.example' }),
            revoke: await postForm('/oauth2/revoke', { token: stack.token, client_id: stack.tenant.clientId }),
            authorize: await authorizePage(),
            apiFromBrowser: await apiFromBrowser(),
          };
          await sleep(1000);
          const restarted = performance.now();
          await postgres.server.start();
          startMs = performance.now() - restarted;
          recoveredMs = await waitFor(
            'an API call answered after the restart',
            async () => (await callApi(stack.system.baseUrl, 'getMe', '/me', stack.token)).status === 200,
            60_000,
          );
        },
        { writers: 4, successesAfter: 40, readEvery: 3 },
      );
      const report = await ledger.verify();

      const down = outcomes.filter((o) => o.status === 503);
      const unexpected = outcomes.filter(
        (o) =>
          ![200, 201, 404, 503].includes(o.status) || (o.status === 503 && o.error !== 'authorization_unavailable'),
      );
      printFigures('PostgreSQL crashed and restarted', {
        requests: outcomes.length,
        '503 authorization_unavailable': down.length,
        'slowest ms': Math.max(...outcomes.map((o) => o.ms)),
        'deadline ms': CHAIN_DEADLINE_MS,
        'PostgreSQL start ms': startMs,
        'first 200 after it listened ms': recoveredMs,
        'acknowledged writes': report.acknowledged,
        'writes without an answer': report.unanswered,
        'records read back': report.records,
      });
      // The token endpoint's outage answer is the contract's 429 with retry-after (decisions.md), never a 400
      // TokenError that would tell the client to throw its refresh token away; with or without an Origin (CORS reads
      // the database first, oidc-provider's storage otherwise), and the revocation endpoint beside it. The refresh
      // token sent while it was down was not consumed.
      const tryLater = '429 invalid_client retry-after 1';
      expect(whileDown).toEqual({
        backend: 503,
        admin: 503,
        token: tryLater,
        tokenFromBrowser: tryLater,
        revoke: tryLater,
        // A person's browser gets the platform's 503 page with retry-after, never a 500 that says to start over.
        authorize: '503 text/html retry-after 1',
        // The gateway's CORS lookup failing allows no origin; a call without a valid token is still 401.
        apiFromBrowser: '401 invalid_token',
      });
      expect(await refresh()).toBe('200 token retry-after null');
      expect(await authorizePage()).toBe('303 text/html retry-after null');
      expect(down.length).toBeGreaterThan(0);
      expect(unexpected).toEqual([]);
      expect(outcomes.filter((o) => o.ms > CHAIN_DEADLINE_MS)).toEqual([]);
      expect(report.problems).toEqual([]);
      expect(report.acknowledged).toBeGreaterThan(0);
    },
    150_000,
  );
});

describe('PostgreSQL hung (every process of the cluster paused): decisions from the facts the feed vouches for', () => {
  it(
    'answers a request whose facts the PDP holds from memory while the feed vouches for them, a request that needs ' +
      "PostgreSQL's data (an addressed person) 503 authorization_unavailable within the deadline, the held ones too " +
      'once the trust window has run out; nothing outlives the deadline, and it recovers by itself',
    async () => {
      const postgres = stack.postgres!;
      const base = stack.system.baseUrl;
      const me = () => answer(base, 'getMe', '/me', stack.token);
      const person = (id: string) => answer(base, 'getPerson', `/persons/${id}`, stack.token);
      await freshReading();
      expect(shape(await me())).toEqual({ status: 200, error: undefined, retryAfter: false }); // facts held, trusted
      postgres.pause();
      let held: Answer, together: Answer[], afterTrust: Answer;
      try {
        // Sent at once: within the trust window of the reading the call above made.
        held = await me();
        together = await Promise.all([me(), ...stack.personIds.slice(0, 3).map(person)]);
        await sleep(FEED_TRUST_MS + 200);
        afterTrust = await me();
      } finally {
        postgres.resume();
      }
      const recoveredMs = await waitFor(
        'an API call answered after the database continued',
        async () => (await person(stack.personIds[0]!)).status === 200,
        30_000,
      );
      const all = [held, ...together, afterTrust];
      printFigures('PostgreSQL hung', {
        requests: all.length,
        'answered from held facts': all.filter((a) => a.status === 200).length,
        'slowest ms': Math.max(...all.map((a) => a.ms)),
        'deadline ms': PDP_DEADLINE_MS,
        'first person answered after it continued ms': recoveredMs,
      });
      // Held facts the feed vouches for: nothing they miss can have been committed while the database hangs.
      expect(shape(held)).toEqual({ status: 200, error: undefined, retryAfter: false });
      const [meTogether, ...persons] = together;
      // Sent later, it is answered from memory or, if the window ran out meanwhile, refused; never anything else.
      expect([200, 503]).toContain(meTogether!.status);
      if (meTogether!.status === 503) expect(shape(meTogether!)).toEqual(UNAVAILABLE);
      // An addressed person is always read from PostgreSQL (docs/decisions.md): no decision without it.
      for (const p of persons) expect(shape(p)).toEqual(UNAVAILABLE);
      // The trust window over, the PDP needs the database's revision, and the database hangs.
      expect(shape(afterTrust)).toEqual(UNAVAILABLE);
      for (const a of all) expect(a.ms).toBeLessThan(PDP_DEADLINE_MS + DEADLINE_SLACK_MS);
    },
    60_000,
  );
});

describe('replicas: two PDPs and two gateways; a change committed through one PDP is never missed by the other', () => {
  // A second PDP whose database connections go through a proxy the test can freeze (the database goes on serving the
  // other services), and a second gateway that asks that PDP. Changes go through the first PDP's admin API.
  let proxy: TcpProxy;
  let pdp: Child;
  let gateway: Child;
  let base: string;
  beforeAll(async () => {
    const direct = new URL(stack.system.databaseUrl);
    proxy = await tcpProxy({ host: direct.hostname, port: Number(direct.port) });
    const proxied = new URL(stack.system.databaseUrl);
    proxied.port = String(proxy.port);
    const [pdpPort, gatewayPort] = await freePorts(2);
    const env = {
      PATH: process.env.PATH,
      REDIS_URL: stack.redisUrl,
      INTERNAL_SECRET: stack.system.internalSecret,
      ADMIN_TOKEN: stack.system.adminToken,
      AUTH_URL: stack.system.authUrl,
      LOG_LEVEL: 'info',
    };
    pdp = new Child('policies-2', ...nodeEntry('policies/main.ts'), {
      env: { ...env, DATABASE_URL: proxied.href, PDP_PORT: String(pdpPort) },
      readyLine: /"msg":"policies[^"]*listening"/,
    });
    gateway = new Child('gateway-2', ...nodeEntry('gateway/main.ts'), {
      env: {
        ...env,
        DATABASE_URL: stack.system.databaseUrl,
        GATEWAY_PORT: String(gatewayPort),
        PDP_URL: `http://127.0.0.1:${pdpPort}`,
        BACKEND_URL: stack.system.backendUrl,
        // Replicas behind one address: a DPoP proof's htu names the address callers use, not each process's own.
        GATEWAY_PUBLIC_URL: new URL(stack.system.baseUrl).origin,
      },
      readyLine: /"msg":"gateway[^"]*listening"/,
    });
    await Promise.all([pdp.start(), gateway.start()]);
    base = `http://127.0.0.1:${gatewayPort}/v1`;
  }, 90_000);
  afterAll(async () => {
    proxy?.thaw();
    await Promise.all([gateway?.stop(), pdp?.stop()]);
    await proxy?.close();
  });

  it('refuses a DPoP proof used at one gateway process when it is replayed at the other (the jti ledger is Redis)', async () => {
    const key = await dpopKey();
    const { token } = await consentedTenant(['svc.profile.self.read'], { cnf: { jkt: key.jkt } });
    const htu = `${new URL(stack.system.baseUrl).origin}/v1/me`;
    const proof = await makeProof(key, { htm: 'GET', htu, token });
    expect((await dpopCall(stack.system.baseUrl, 'getMe', '/me', token, proof)).status).toBe(200);
    const replayed = await dpopCall(base, 'getMe', '/me', token, proof);
    expect([replayed.status, (replayed.body as { error?: string }).error]).toEqual([401, 'invalid_token']);
    expect(dpopChallenge(replayed.headers.get('www-authenticate'))?.error).toBe('invalid_dpop_proof');
    // The same gateway takes a fresh proof of the same key: the refusal was the replay.
    const fresh = await makeProof(key, { htm: 'GET', htu, token });
    expect((await dpopCall(base, 'getMe', '/me', token, fresh)).status).toBe(200);
  });

  const me = { operationId: 'getMe', path: () => '/me' };
  const ownPerson = { operationId: 'getPerson', path: (t: TenantSetup) => `/persons/${t.personId}` };
  const KINDS = [
    {
      kind: 'a grant withdrawn',
      route: me,
      denial: 'capability_not_granted',
      change: (t: TenantSetup) => stack.admin.ok('DELETE', `/tenants/${t.tenantId}/grants/${t.clientId}`),
    },
    {
      kind: 'an account disabled',
      route: me,
      denial: 'subject_revoked',
      change: (t: TenantSetup) => stack.admin.ok('PATCH', `/accounts/${t.accountId}`, { status: 'disabled' }),
    },
    {
      kind: "an account's epoch advanced",
      route: me,
      denial: 'epoch_changed',
      change: (t: TenantSetup) => stack.admin.ok('POST', `/accounts/${t.accountId}/epoch`),
    },
    {
      kind: "an account's sessions revoked",
      route: me,
      denial: 'subject_revoked',
      change: (t: TenantSetup) => stack.admin.ok('POST', `/accounts/${t.accountId}/sessions/revoke`),
    },
    {
      // svc.person.read is the plan-bound capability; its route addresses a person, which is always read from
      // PostgreSQL, so this decision is never made from held facts alone, before the change or after.
      kind: "a tenant's plan downgraded",
      route: ownPerson,
      denial: 'plan_capability_excluded',
      change: (t: TenantSetup) => stack.admin.ok('PATCH', `/tenants/${t.tenantId}`, { plan: 'L1' }),
    },
  ];

  it.each(KINDS.map((k) => [k.kind, k] as const))(
    '%s through the first PDP under load through both gateways: every request sent after the change was ' +
      'acknowledged is refused with its denial, whichever replica decides it',
    async (_kind, { route, denial, change }) => {
      const { t, token } = await consentedTenant();
      const bases = [stack.system.baseUrl, base];
      /** Each request: when it was sent and answered, through which gateway, and its answer. */
      const sent: { at: number; done: number; base: string; status: number; error: string | undefined }[] = [];
      let acknowledgedAt = Infinity;
      const after = () => sent.filter((c) => c.at > acknowledgedAt);
      // Until half a second after the acknowledgement, and at least five requests sent after it through each gateway.
      const enough = () =>
        performance.now() > acknowledgedAt + 500 && bases.every((b) => after().filter((c) => c.base === b).length >= 5);
      // Four callers per gateway, each sending its next request as soon as the last one is answered.
      const caller = async (b: string) => {
        while (!enough()) {
          const at = performance.now();
          const a = await answer(b, route.operationId, route.path(t), token);
          sent.push({ at, done: performance.now(), base: b, status: a.status, error: a.error });
        }
      };
      const callers = bases.flatMap((b) => Array.from({ length: 4 }, () => caller(b)));
      await waitFor(
        'both replicas answering',
        async () => bases.every((b) => sent.some((c) => c.base === b)),
        10_000,
        20,
      );
      const changeSentAt = performance.now();
      await change(t);
      acknowledgedAt = performance.now();
      await Promise.all(callers);
      const outcome = (cs: typeof sent) => [...new Set(cs.map((c) => `${c.status} ${c.error}`))].sort();
      printFigures(`replicas under load, ${_kind}`, {
        'requests before the change': sent.length - after().length,
        'after it': after().length,
        'answers after it': outcome(after()).join(', '),
      });
      expect(outcome(sent.filter((c) => c.done < changeSentAt))).toEqual(['200 undefined']);
      for (const b of bases) expect(outcome(after().filter((c) => c.base === b))).toEqual([`403 ${denial}`]);
    },
    30_000,
  );

  it.each(KINDS.map((k) => [k.kind, k] as const))(
    '%s through the first PDP while the second cannot reach PostgreSQL: the second answers 503 authorization_unavailable until it reads the change, ' +
      'never the old allow',
    async (_kind, { route, denial, change }) => {
      const { t, token } = await consentedTenant();
      const call = () => answer(base, route.operationId, route.path(t), token);
      const allowed = { status: 200, error: undefined, retryAfter: false };
      expect(shape(await call())).toEqual(allowed); // the second PDP read the setup's revision and holds the facts
      proxy.freeze();
      let before: Answer, after: Answer[];
      try {
        before = await call();
        await change(t); // acknowledged: published to the feed by the first PDP
        after = await Promise.all([call(), call(), call()]);
      } finally {
        proxy.thaw();
      }
      const settled = await call();
      printFigures(`a PDP cut off from PostgreSQL, ${_kind}`, {
        'before the change': before.status,
        'after it': after.map((a) => a.status).join('/'),
        'slowest ms': Math.max(...after.map((a) => a.ms)),
        'once reconnected': `${settled.status} ${settled.error}`,
      });
      if (route === me)
        expect(shape(before)).toEqual(allowed); // from held facts: the feed vouched for them
      else expect(shape(before)).toEqual(UNAVAILABLE); // the addressed person needs PostgreSQL
      for (const a of after) {
        expect(shape(a)).toEqual(UNAVAILABLE);
        expect(a.ms).toBeLessThan(PDP_DEADLINE_MS + DEADLINE_SLACK_MS);
      }
      expect({ status: settled.status, error: settled.error }).toEqual({ status: 403, error: denial });
    },
    30_000,
  );
});

describe('Redis stopped and restarted under traffic (docs/decisions.md, "Redis outage")', () => {
  const LIMIT = 10;

  /**
   * Starts the stopped Redis and waits until the gateway is connected to it again (its readiness pings Redis): until
   * then it counts in process, so a test after this one would start with a count Redis never saw.
   */
  const restartRedis = async () => {
    await stack.redis!.start();
    await untilReady(stack.system.services.gateway, stack.system.managementUrls.gateway);
  };

  it(
    'with the revision feed unreadable, a PDP reads the revision from PostgreSQL for every batch: decisions go on, ' +
      'and a change acknowledged meanwhile (after waiting out the trust window) is decided on the next request',
    async () => {
      const redis = stack.redis!;
      const { t, token } = await consentedTenant();
      const call = () => answer(stack.system.baseUrl, 'getMe', '/me', token);
      expect((await call()).status).toBe(200);
      await redis.stop();
      let during: Answer, after: Answer, changeMs: number;
      try {
        during = await call();
        const began = performance.now();
        await stack.admin.ok('DELETE', `/tenants/${t.tenantId}/grants/${t.clientId}`);
        changeMs = performance.now() - began;
        after = await call();
      } finally {
        await restartRedis();
      }
      printFigures('Redis stopped, the feed unreadable', {
        'before the change': during.status,
        'change acknowledged after ms': changeMs,
        'after it': `${after.status} ${after.error}`,
      });
      expect(shape(during)).toEqual({ status: 200, error: undefined, retryAfter: false });
      // Its revision could not be published: the change waited until no PDP trusted the feed for older facts.
      expect(changeMs).toBeGreaterThanOrEqual(FEED_TRUST_MS);
      expect({ status: after.status, error: after.error }).toEqual({ status: 403, error: 'capability_not_granted' });
    },
    60_000,
  );

  it(
    'limits in process while Redis is away (no 5xx, no wait on Redis), ' +
      'counts in Redis again once it is back, and admits at most one limit per gateway beyond Redis',
    async () => {
      const redis = stack.redis!;
      // A window long enough to hold the whole test: every phase counts against one window of each store.
      await stack.admin.ok('PATCH', `/tenants/${stack.tenant.tenantId}`, {
        rateLimit: { tenant: { points: LIMIT, durationS: 600 }, account: { points: 1000, durationS: 600 } },
      });
      const call = async () => {
        const started = performance.now();
        const res = await callApi(stack.system.baseUrl, 'getMe', '/me', stack.token);
        if (res.status === 429) expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        return { status: res.status, ms: performance.now() - started };
      };
      /** `n` calls one after another; the statuses and the slowest. */
      const burst = async (n: number) => {
        const answers = [];
        for (let i = 0; i < n; i++) answers.push(await call());
        const ms = answers.map((a) => a.ms).sort((a, b) => a - b);
        return {
          allowed: answers.filter((a) => a.status === 200).length,
          statuses: new Set(answers.map((a) => a.status)),
          median: ms[Math.floor(ms.length / 2)]!,
          slowest: ms.at(-1)!,
        };
      };

      // Up to the limit and no further: a refusal counted in Redis would block the tenant here until the window ends.
      const before = await burst(LIMIT);
      await redis.stop();
      const during = await burst(2 * LIMIT);
      await redis.start();
      // In process the window is full, so the first 200 means the gateway counts in the (restarted, empty) Redis again.
      const reconnectedMs = await waitFor(
        'a call counted in Redis again',
        async () => (await call()).status === 200,
        30_000,
        100,
      );
      const after = await burst(2 * LIMIT);
      await stack.admin.ok('PATCH', `/tenants/${stack.tenant.tenantId}`, {
        rateLimit: { tenant: { points: 1_000_000, durationS: 60 }, account: { points: 1_000_000, durationS: 60 } },
      });

      printFigures('Redis stopped and restarted', {
        limit: LIMIT,
        'allowed before': before.allowed,
        'allowed while away': during.allowed,
        'allowed after (incl. the first)': after.allowed + 1,
        'median/slowest before ms': `${before.median.toFixed(1)}/${before.slowest.toFixed(0)}`,
        'median/slowest while away ms': `${during.median.toFixed(1)}/${during.slowest.toFixed(0)}`,
        'counted in Redis again after ms': reconnectedMs,
      });
      expect([...before.statuses]).toEqual([200]);
      for (const phase of [during, after]) expect([...phase.statuses].sort()).toEqual([200, 429]);
      expect(before.allowed).toBe(LIMIT);
      expect(during.allowed).toBe(LIMIT); // one gateway: one limit in process, never open
      expect(after.allowed + 1).toBe(LIMIT);
      // No request waits on the absent Redis: its reconnect backoff is seconds, and a request that waited for it would
      // take that long (a deadline, not a speed measurement: the medians are printed above, not compared).
      expect(during.slowest).toBeLessThan(3000);
    },
    120_000,
  );
});
