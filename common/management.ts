// The management listener: one per process, apart from the API ports. GET /metrics (Prometheus text format),
// GET /livez (the process answers), GET /readyz (every registered dependency answers and no shutdown is under way).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { listen, type Listening } from './http.js';
import type { Telemetry } from './telemetry.js';

export async function startManagement(port: number, host: string, telemetry: Telemetry): Promise<Listening> {
  const http = await listen(port, host, 'MANAGEMENT_PORT');
  http.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const send = (status: number, type: string, body: string) =>
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' }).end(body);
    const json = (status: number, body: unknown) => send(status, 'application/json', JSON.stringify(body));
    if (req.method !== 'GET') return json(405, { error: 'method not allowed' });
    switch (new URL(req.url ?? '/', 'http://management').pathname) {
      case '/metrics':
        return void telemetry.registry.metrics().then(
          (text) => send(200, telemetry.registry.contentType, text),
          () => json(500, { error: 'metrics unavailable' }),
        );
      case '/livez':
        return json(200, { status: 'ok' });
      case '/readyz':
        return void telemetry
          .readiness()
          .then((r) => json(r.ready ? 200 : 503, { status: r.ready ? 'ready' : 'unready', checks: r.checks }));
      default:
        return json(404, { error: 'not found' });
    }
  });
  return http;
}
