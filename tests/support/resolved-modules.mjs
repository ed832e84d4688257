// Lists the OpenTelemetry modules a process loads: every module under node_modules/@opentelemetry that is imported
// (a loader hook) or required (CommonJS resolution, patched in the main thread) is appended to the file named by
// RESOLVED_MODULES_FILE. Used as `--import ./tests/support/resolved-modules.mjs` after `--import tsx`.
import { appendFileSync } from 'node:fs';
import Module, { register } from 'node:module';

const file = process.env.RESOLVED_MODULES_FILE;
const OTEL = '/node_modules/@opentelemetry/';

let target;
export function initialize(data) {
  target = data?.file;
}

export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (target && resolved.url.includes(OTEL)) appendFileSync(target, `${resolved.url}\n`);
  return resolved;
}

if (file) {
  register(import.meta.url, import.meta.url, { data: { file } });
  const resolveFilename = Module._resolveFilename;
  Module._resolveFilename = function (...args) {
    const found = resolveFilename.apply(this, args);
    if (found.includes(OTEL)) appendFileSync(file, `${found}\n`);
    return found;
  };
}
