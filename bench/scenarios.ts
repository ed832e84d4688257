// `npm run bench`: what each connection of a measurement sends, built in the load generator's process from plain
// data (functions cannot cross processes). Stateful scenarios keep their state per connection: a write carries the
// ETag of its connection's last answer, a refresh chain the refresh token of its last answer.
import { contextSigner, type CallContext } from '../common/internal-context.js';
import { randomUUID } from 'node:crypto';
import { SignJWT, importJWK, type JWK } from 'jose';
import { basicAuth } from '../tests/support/oauth.js';
import { accessTokenHash } from '../gateway/plugins/dpop/proof.js';

export interface BenchRequest {
  method: 'GET' | 'PUT' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export type ScenarioSpec =
  /** The same request again and again; answered 2xx, or `status` when given (a sign-in's 303). */
  | { kind: 'fixed'; request: BenchRequest; status?: number }
  /** A GET to the backend with a context signed for each request, as the gateway sends it. */
  | { kind: 'signed'; path: string; secret: string; context: CallContext }
  /** PUT with If-Match on the connection's own record (`paths[connection]`), starting from `etags[connection]`. */
  | { kind: 'own-record-put'; paths: string[]; etags: string[]; bearer: string }
  /**
   * Refresh grants, one strictly rotated chain per connection (`tokens[connection]`): of a public client, or of a
   * confidential one authenticating with HTTP Basic when `clientSecret` is given.
   */
  | { kind: 'refresh'; path: string; tokens: string[]; clientId: string; clientSecret?: string }
  /**
   * A GET with a DPoP-bound token (issue 49): `Authorization: DPoP`, and a proof of its own for each request (fresh jti
   * and iat) signed with the key `privateJwk`, as an app does. The proofs are signed before the timed phase
   * (`prepare`), each used once, well inside the gateway's iat window: signing them during it took the load
   * generator's CPU from the same two cores the services run on, which lowered the DPoP rate though it is not the
   * system's cost. A run that outlasts its pool signs the rest as it goes (and says so).
   */
  | { kind: 'dpop-get'; origin: string; path: string; token: string; privateJwk: JWK; publicJwk: JWK }
  /** infra/k6/api-read.k6.ts: me, tenant, person, extension list, one extension, in turn. */
  | { kind: 'read-mix'; bearer: string; personId: string; extensionId: string }
  /** infra/k6/api-write.k6.ts: read the record's ETag, PUT with If-Match; on 409 re-read. Connections share records. */
  | { kind: 'write-mix'; bearer: string; personIds: string[]; extensionId: string };

export interface Connection {
  /** The next request; a promise when making it takes work of its own (a DPoP proof's signature). */
  next(): BenchRequest | Promise<BenchRequest>;
  /**
   * Work done ahead of a run for about `requests` requests, outside the timed phase (DPoP proofs); returns how many
   * of the previous run's requests had to do it during the run.
   */
  prepare?(requests: number): Promise<number>;
  /** Sees every answer; returns whether it is one the scenario expects. */
  answer(status: number, headers: Record<string, string | string[] | undefined>, body: string): boolean;
}

const ok2xx = (status: number) => status >= 200 && status < 300;
const header = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
const extensionPath = (personId: string, extensionId: string) => `/v1/persons/${personId}/extensions/${extensionId}`;

/** The behaviour of connection number `n` of a scenario. */
export function connectionOf(spec: ScenarioSpec, n: number): Connection {
  switch (spec.kind) {
    case 'fixed':
      return { next: () => spec.request, answer: (status) => status === spec.status || ok2xx(status) };
    case 'signed': {
      const sign = contextSigner(spec.secret);
      let i = 0;
      return {
        next: () => {
          const requestId = `bench-${n}-${++i}`;
          return {
            method: 'GET',
            path: spec.path,
            headers: {
              'x-request-id': requestId,
              ...sign({ ...spec.context, requestId }, { method: 'GET', path: spec.path }),
            },
          };
        },
        answer: ok2xx,
      };
    }
    case 'own-record-put': {
      let etag = spec.etags[n]!;
      let i = 0;
      return {
        next: () => ({
          method: 'PUT',
          path: spec.paths[n]!,
          headers: { authorization: `Bearer ${spec.bearer}`, 'content-type': 'application/json', 'if-match': etag },
          body: JSON.stringify({ schemaVersion: 1, data: { note: `write ${n}.${++i}` } }),
        }),
        answer: (status, headers) => {
          if (status === 200) etag = header(headers.etag)!;
          return status === 200;
        },
      };
    }
    case 'refresh': {
      let token = spec.tokens[n]!;
      const auth: { headers: Record<string, string>; form: Record<string, string> } = spec.clientSecret
        ? { headers: { authorization: basicAuth(spec.clientId, spec.clientSecret) }, form: {} }
        : { headers: {}, form: { client_id: spec.clientId } };
      return {
        next: () => ({
          method: 'POST',
          path: spec.path,
          headers: { 'content-type': 'application/x-www-form-urlencoded', ...auth.headers },
          body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token, ...auth.form }).toString(),
        }),
        answer: (status, _headers, body) => {
          if (status === 200) token = JSON.parse(body).refresh_token;
          return status === 200;
        },
      };
    }
    case 'dpop-get': {
      const key = importJWK(spec.privateJwk, 'ES256');
      const ath = accessTokenHash(spec.token);
      const authorization = `DPoP ${spec.token}`;
      const htu = `${spec.origin}${spec.path}`;
      const sign = async () =>
        new SignJWT({ htm: 'GET', htu, ath, jti: randomUUID() })
          .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: spec.publicJwk })
          .setIssuedAt()
          .sign(await key);
      let pool: string[] = [];
      let signedInRun = 0;
      return {
        next: async () => ({
          method: 'GET',
          path: spec.path,
          headers: { authorization, dpop: pool.pop() ?? (signedInRun++, await sign()) },
        }),
        prepare: async (requests) => {
          const late = signedInRun;
          // Proofs left from the last run are dropped: every run starts with proofs signed just before it.
          pool = [];
          signedInRun = 0;
          for (let i = 0; i < requests; i++) pool.push(await sign());
          return late;
        },
        answer: ok2xx,
      };
    }
    case 'read-mix': {
      const paths = [
        '/v1/me',
        '/v1/tenant',
        `/v1/persons/${spec.personId}`,
        `/v1/persons/${spec.personId}/extensions?limit=20`,
        extensionPath(spec.personId, spec.extensionId),
      ];
      let i = 0;
      return {
        next: () => ({
          method: 'GET',
          path: paths[i++ % paths.length]!,
          headers: { authorization: `Bearer ${spec.bearer}` },
        }),
        answer: ok2xx,
      };
    }
    case 'write-mix': {
      let path = '';
      let etag: string | undefined;
      let i = 0;
      return {
        next: (): BenchRequest => {
          if (etag === undefined) {
            path = extensionPath(spec.personIds[Math.floor(Math.random() * spec.personIds.length)]!, spec.extensionId);
            return { method: 'GET', path, headers: { authorization: `Bearer ${spec.bearer}` } };
          }
          return {
            method: 'PUT',
            path,
            headers: { authorization: `Bearer ${spec.bearer}`, 'content-type': 'application/json', 'if-match': etag },
            body: JSON.stringify({ schemaVersion: 1, data: { note: `mix ${n}.${++i}` } }),
          };
        },
        answer: (status, headers) => {
          // A GET's ETag is used for the PUT; after a PUT (done, or 409 because another connection wrote first) the
          // next iteration re-reads, as the k6 script does.
          etag = etag === undefined && status === 200 ? header(headers.etag) : undefined;
          return status === 200 || status === 409;
        },
      };
    }
  }
}
