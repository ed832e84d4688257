// JSON Schema (draft 2020-12) for extension data, compiled the same way where a schema is registered (admin API)
// and where data is checked against it (backend), so a schema accepted at registration never fails at write time.
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { ValidateFunction } from 'ajv';

const Ajv2020 = Ajv2020Module.default;
const addFormats = addFormatsModule.default;

export type DataValidator = ValidateFunction;

export type CompiledSchema = { ok: true; validate: DataValidator } | { ok: false; message: string };

/**
 * Compiles one extension data schema. Refused: anything but a schema object, a schema the 2020-12 meta-schema
 * rejects, unknown keywords or formats (strict mode: a typo must not silently validate nothing), unresolvable $refs.
 * Each schema gets its own ajv instance, so schemas of different extensions can reuse an $id without clashing.
 */
export function compileExtensionSchema(schema: unknown): CompiledSchema {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return { ok: false, message: 'a schema must be a JSON Schema object' };
  const ajv = new Ajv2020({ strict: true, strictTypes: false, strictTuples: false, strictRequired: false, allErrors: false });
  addFormats(ajv);
  try {
    if (!ajv.validateSchema(schema)) return { ok: false, message: `not a valid JSON Schema (2020-12): ${ajv.errorsText(ajv.errors)}` };
    return { ok: true, validate: ajv.compile(schema) };
  } catch (err) {
    return { ok: false, message: `not a usable JSON Schema (2020-12): ${(err as Error).message}` };
  }
}
