// A TCP proxy a test can freeze: one process's connections to a server (its database) stop carrying bytes in both
// directions while the server itself goes on serving everyone else. Frozen, the proxy still accepts connections but
// forwards nothing on them; thawed, everything held is delivered in order. A network partition between one process
// and its store, without pausing the store.
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  /** host:port to give the process instead of the server's. */
  port: number;
  freeze(): void;
  thaw(): void;
  close(): Promise<void>;
}

/** Listens on a free port of 127.0.0.1 and forwards each connection to `target`. */
export async function tcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let frozen = false;
  const sockets = new Set<Socket>();
  /** Bytes read from `from` are written to `to`; a full `to` pauses `from` until it drains (unless frozen). */
  const forward = (from: Socket, to: Socket) => {
    from.on('data', (chunk) => {
      if (!to.write(chunk)) from.pause();
    });
    to.on('drain', () => {
      if (!frozen) from.resume();
    });
    from.on('end', () => to.end());
    from.on('error', () => to.destroy());
    from.on('close', () => (sockets.delete(from), to.destroy()));
  };
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      // Paused before its 'data' listener is added, a socket stays paused: the listener does not resume it.
      if (frozen) s.pause();
    }
    forward(client, upstream);
    forward(upstream, client);
  });
  await new Promise<void>((ok, fail) => server.once('error', fail).listen(0, '127.0.0.1', ok));
  return {
    port: (server.address() as { port: number }).port,
    freeze() {
      frozen = true;
      for (const s of sockets) s.pause();
    },
    thaw() {
      frozen = false;
      for (const s of sockets) s.resume();
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((ok) => server.close(ok));
    },
  };
}
