// The PUT body (contract §2 PersonExtensionWrite): exactly {schemaVersion, data}, data at most 16 KiB serialized.
import { done, refused, type Outcome } from '../wire/outcome.js';
import { jsonInputProblem } from '../common/json-input.js';

/** Contract §8: a single extension's `data`, serialized as UTF-8 JSON. */
const MAX_DATA_BYTES = 16 * 1024;
/** Registered versions have at most 9 digits (admin API); larger values cannot be registered and must not reach SQL. */
const MAX_SCHEMA_VERSION = 999_999_999;

export interface ExtensionWrite {
  schemaVersion: number;
  data: Record<string, unknown>;
  /** `data` as stored: its JSON text. */
  json: string;
}

export type ParsedWrite = Outcome<ExtensionWrite, 'schema_invalid' | 'payload_too_large'>;

/**
 * Deepest nesting of arrays and objects accepted in `data`. 16 KiB can hold thousands of levels, which PostgreSQL's
 * recursive jsonb parser refuses (stack depth) and schema validation would recurse through; no real metadata needs it.
 */
const MAX_DATA_DEPTH = 32;

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const invalid = (message: string): ParsedWrite => refused('schema_invalid', message);

export function parseExtensionWrite(raw: Buffer): ParsedWrite {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    return invalid('the body is not valid JSON');
  }
  if (!isPlainObject(body)) return invalid('the body must be a JSON object');
  const unlisted = Object.keys(body).filter((k) => k !== 'schemaVersion' && k !== 'data');
  if (unlisted.length) return invalid(`unlisted fields: ${unlisted.join(', ')}`);
  const { schemaVersion, data } = body;
  if (
    !Number.isSafeInteger(schemaVersion) ||
    (schemaVersion as number) < 1 ||
    (schemaVersion as number) > MAX_SCHEMA_VERSION
  )
    return invalid('schemaVersion must be an integer >= 1');
  if (!isPlainObject(data)) return invalid('data must be a JSON object');
  // Before serializing: JSON.stringify recurses (a few thousand
  // levels overflow the stack), and jsonb refuses lone surrogates.
  const problem = jsonInputProblem(data, MAX_DATA_DEPTH);
  if (problem) return invalid(`data ${problem}`);
  const json = JSON.stringify(data);
  if (Buffer.byteLength(json, 'utf8') > MAX_DATA_BYTES)
    return refused('payload_too_large', 'data is over 16 KiB serialized');
  return done({ schemaVersion: schemaVersion as number, data, json });
}
