// `npm run admin -- export --tenant <id> [--extension <id>] [--client <id>] > file`: a tenant's extension records as
// NDJSON on stdout, and `npm run admin -- export-tenant --tenant <id> > file` the whole tenant (every line typed),
// streamed as they arrive (constant memory whatever the size), with a progress line on stderr.
import { once } from 'node:events';
import { Readable, type Writable } from 'node:stream';
import type { ReadableStream as WebStream } from 'node:stream/web';
import { COMMON_FLAGS_HELP, UsageError, adminFetch, adminTarget, exitCodeOf, parseFlags } from './admin-call.js';

const TENANT_EXPORT_HELP = [
  'npm run admin -- export-tenant --tenant <tenantId> > tenant.ndjson',
  '',
  'The whole tenant, one JSON object a line, each with a type (tenant, person, app, grant, service_account, ' +
    'extension, record, audit_entry), from one consistent snapshot (GET /admin/v1/tenants/{tenantId}/export/tenant).',
  'No password, secret or key is in it. Progress goes to stderr. An export cut short exits 3 and its file ends with ' +
    'an unfinished line.',
  '',
  COMMON_FLAGS_HELP,
].join('\n');

const EXPORT_HELP = [
  'npm run admin -- export --tenant <tenantId> [--extension <extensionId>] [--client <clientId>] > records.ndjson',
  '',
  'Every extension record of the tenant, one JSON object a line, from one consistent snapshot ' +
    '(GET /admin/v1/tenants/{tenantId}/export).',
  'Progress goes to stderr. An export cut short exits 3 and its file ends with an unfinished line.',
  '',
  COMMON_FLAGS_HELP,
].join('\n');

export interface ExportIo {
  stdout: Writable;
  err(text: string): void;
}

const PROGRESS_EVERY_MS = 2000;

/**
 * Runs the export command line, of the records or (`whole`) of the whole tenant; returns the exit code (0 done,
 * 1 refused, 2 usage, 3 unreachable, failing or cut).
 */
export function runExport(
  args: string[],
  env: Record<string, string | undefined>,
  io: ExportIo,
  whole = false,
): Promise<number> {
  const help = whole ? TENANT_EXPORT_HELP : EXPORT_HELP;
  return exitCodeOf(
    async () => {
      const flags = parseFlags(args, {
        tenant: { type: 'string' },
        extension: { type: 'string' },
        client: { type: 'string' },
      });
      if (flags.help) {
        io.stdout.write(`${help}\n`);
        return 0;
      }
      if (!flags.tenant) throw new UsageError(`${whole ? 'export-tenant' : 'export'} needs --tenant <tenantId>`);
      if (whole && (flags.extension || flags.client))
        throw new UsageError('export-tenant exports everything: it takes no --extension or --client');
      const target = adminTarget(flags, env);
      const query = new URLSearchParams();
      if (flags.extension) query.set('extensionId', flags.extension);
      if (flags.client) query.set('clientId', flags.client);
      const path =
        `/tenants/${encodeURIComponent(flags.tenant)}/export${whole ? '/tenant' : ''}` +
        `${query.size ? `?${query}` : ''}`;
      // fetch asks for gzip and inflates it as it reads; no deadline, since a large export streams for minutes.
      const res = await adminFetch(target, 'GET', path);
      return copyLines(res, io, whole ? 'lines' : 'records');
    },
    io,
    help,
  );
}

/** Writes the answer's lines to stdout as they arrive, with a progress line every 2 s; 3 when the stream is cut. */
async function copyLines(res: Response, io: ExportIo, noun: 'records' | 'lines'): Promise<number> {
  let records = 0;
  let lastReport = Date.now();
  try {
    for await (const chunk of Readable.fromWeb(res.body as WebStream<Uint8Array>)) {
      for (const byte of chunk) if (byte === 10) records++;
      if (!io.stdout.write(chunk)) await once(io.stdout, 'drain');
      if (Date.now() - lastReport >= PROGRESS_EVERY_MS) {
        io.err(`export: ${records.toLocaleString('en')} ${noun} so far`);
        lastReport = Date.now();
      }
    }
  } catch (err) {
    const cause = (err as Error).message;
    io.err(`export cut short after ${records.toLocaleString('en')} ${noun} (${cause}): the output is incomplete`);
    return 3;
  }
  io.err(`export: ${records.toLocaleString('en')} ${noun}`);
  return 0;
}
