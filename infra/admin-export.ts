// `npm run admin -- export --tenant <id> [--extension <id>] [--client <id>] > file`: a tenant's extension records as
// NDJSON on stdout, streamed as they arrive (constant memory whatever the size), with a progress line on stderr.
import { once } from 'node:events';
import { Readable, type Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import type { ReadableStream as WebStream } from 'node:stream/web';

const EXPORT_HELP = [
  'npm run admin -- export --tenant <tenantId> [--extension <extensionId>] [--client <clientId>] > records.ndjson',
  '',
  'Every extension record of the tenant, one JSON object a line, from one consistent snapshot (GET /admin/v1/tenants/{tenantId}/export).',
  'Progress goes to stderr. An export cut short exits 3 and its file ends with an unfinished line.',
  '',
  'Common flags: --url <admin URL> (ADMIN_URL), --token <token> (ADMIN_TOKEN), --help',
].join('\n');

export interface ExportIo {
  stdout: Writable;
  err(text: string): void;
}

const PROGRESS_EVERY_MS = 2000;

/** Runs the export command line; returns the exit code (0 done, 1 refused, 2 usage, 3 unreachable, failing or cut). */
export async function runExport(
  args: string[],
  env: Record<string, string | undefined>,
  io: ExportIo,
): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        tenant: { type: 'string' },
        extension: { type: 'string' },
        client: { type: 'string' },
        url: { type: 'string' },
        token: { type: 'string' },
        help: { type: 'boolean' },
      },
      strict: true,
    }));
  } catch (err) {
    io.err(`${(err as Error).message}\n\n${EXPORT_HELP}`);
    return 2;
  }
  if (values.help) {
    io.stdout.write(`${EXPORT_HELP}\n`);
    return 0;
  }
  if (!values.tenant) {
    io.err(`export needs --tenant <tenantId>\n\n${EXPORT_HELP}`);
    return 2;
  }
  const token = values.token ?? env.ADMIN_TOKEN;
  if (!token) {
    io.err(
      'no admin token: set ADMIN_TOKEN or pass --token (the operator token npm start prints, or a tenant admin key)',
    );
    return 2;
  }
  const base = (values.url ?? env.ADMIN_URL ?? 'http://127.0.0.1:8181/admin/v1').replace(/\/+$/, '');
  const query = new URLSearchParams();
  if (values.extension) query.set('extensionId', values.extension);
  if (values.client) query.set('clientId', values.client);
  const path = `/tenants/${encodeURIComponent(values.tenant)}/export${query.size ? `?${query}` : ''}`;

  let res: Response;
  try {
    // fetch asks for gzip and inflates it as it reads.
    res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });
  } catch (err) {
    io.err(
      `cannot reach the admin API at ${base}: ${((err as Error).cause as Error | undefined)?.message ?? (err as Error).message}`,
    );
    return 3;
  }
  if (!res.ok || !res.body) {
    io.err(`GET ${path} -> ${res.status}\n${await res.text()}`);
    return res.status >= 500 ? 3 : 1;
  }
  let records = 0;
  let lastReport = Date.now();
  try {
    for await (const chunk of Readable.fromWeb(res.body as WebStream<Uint8Array>)) {
      for (const byte of chunk) if (byte === 10) records++;
      if (!io.stdout.write(chunk)) await once(io.stdout, 'drain');
      if (Date.now() - lastReport >= PROGRESS_EVERY_MS) {
        io.err(`export: ${records.toLocaleString('en')} records so far`);
        lastReport = Date.now();
      }
    }
  } catch (err) {
    io.err(
      `export cut short after ${records.toLocaleString('en')} records (${(err as Error).message}): the output is incomplete`,
    );
    return 3;
  }
  io.err(`export: ${records.toLocaleString('en')} records`);
  return 0;
}
