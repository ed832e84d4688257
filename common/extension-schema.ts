// JSON Schema (draft 2020-12) for extension data, compiled the same way where a schema is registered (admin API)
// and where data is checked against it (backend), so a schema accepted at registration never fails at write time.
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { ValidateFunction } from 'ajv';
import type { RegExpEngine } from 'ajv/dist/types/index.js';
import { RE2JS } from 're2js';
import { done, refused, type Outcome } from '../wire/outcome.js';

const Ajv2020 = Ajv2020Module.default;
const addFormats = addFormatsModule.default;

export type DataValidator = ValidateFunction;

/** The data validator, or `schema_invalid` saying what is wrong with the schema. */
export type CompiledSchema = Outcome<DataValidator, 'schema_invalid'>;

/**
 * `pattern` and `patternProperties` run on RE2 (re2js): matching time is linear in the input, so a tenant's pattern
 * such as `^(a|a)*$` cannot stall the process that checks data against it (JavaScript's backtracking engine takes
 * seconds per extra character there). RE2 has no backreferences or lookaround: such a pattern does not compile and
 * the schema is refused at registration, naming the pattern. `code` is what ajv's standalone output would import.
 */
function compileLinear(pattern: string) {
  try {
    return RE2JS.compile(pattern);
  } catch (err) {
    throw new Error(
      `pattern ${JSON.stringify(pattern)} cannot be used ` +
        '(patterns are RE2 syntax, matched in linear time: no backreferences or lookaround): ' +
        `${(err as Error).message}`,
    );
  }
}
const linearRegExp: RegExpEngine = Object.assign(compileLinear, { code: 'require("re2js").RE2JS.compile' });

/**
 * Compiles one extension data schema. Refused: anything but a schema object, a schema the 2020-12 meta-schema
 * rejects, unknown keywords or formats (strict mode: a typo must not silently validate nothing), unresolvable $refs.
 * Each schema gets its own ajv instance, so schemas of different extensions can reuse an $id without clashing.
 */
export function compileExtensionSchema(schema: unknown): CompiledSchema {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema))
    return refused('schema_invalid', 'a schema must be a JSON Schema object');
  const ajv = new Ajv2020({
    strict: true,
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    allErrors: false,
    code: { regExp: linearRegExp },
  });
  addFormats(ajv);
  try {
    if (!ajv.validateSchema(schema))
      return refused('schema_invalid', `not a valid JSON Schema (2020-12): ${ajv.errorsText(ajv.errors)}`);
    return done(ajv.compile(schema));
  } catch (err) {
    return refused('schema_invalid', `not a usable JSON Schema (2020-12): ${(err as Error).message}`);
  }
}
