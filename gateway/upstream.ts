// Keep-alive connection pools to the gateway's upstreams (PDP, backend). undici's request API costs a fraction of
// fetch()'s CPU per call, and the gateway makes two such calls on every request.
import { Pool } from 'undici';

export const upstreamPool = (origin: string) =>
  new Pool(origin, { connections: 64, keepAliveTimeout: 30_000, pipelining: 1 });
