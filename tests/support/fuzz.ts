// Property-based request generators derived from the OpenAPI documents (fast-check): for any operation, its path
// parameters, query, headers and body, each either well-formed (from the schema, or a real id the test created)
// or hostile (malformed escapes, unicode edge cases, lone surrogates, NUL, huge numbers, deep nesting, duplicate
// JSON keys, oversized and truncated payloads, wrong content types). Plus a scan of error bodies for leaked
// internals and secrets.
import fc from 'fast-check';
import { isObject as isJsonObject, locate, pointerOf, type DocName, type OperationRef } from './openapi.js';

/** Schema nodes are read loosely here: an object's members typed `any`. */
const isObject = (v: unknown): v is Record<string, any> => isJsonObject(v);

// ---- well-formed values from a schema ----------------------------------------------------------------------------

/** Properties and required names of an object schema, with `allOf` branches merged. */
function objectShape(
  doc: DocName,
  pointer: string,
): { properties: Record<string, string>; required: Set<string>; additional: unknown } {
  const { doc: d, pointer: p, node } = locate(doc, pointer);
  const shape = {
    properties: {} as Record<string, string>,
    required: new Set<string>(),
    additional: (node as any)?.additionalProperties as unknown,
  };
  if (!isObject(node)) return shape;
  for (const name of Object.keys(node.properties ?? {})) shape.properties[name] = `${p}/properties/${name}`;
  for (const name of node.required ?? []) shape.required.add(name);
  (node.allOf ?? []).forEach((_: unknown, i: number) => {
    const branch = objectShape(d, `${p}/allOf/${i}`);
    Object.assign(shape.properties, branch.properties);
    branch.required.forEach((r) => shape.required.add(r));
  });
  return shape;
}

/**
 * Values that satisfy the schema at `pointer` (enough of JSON Schema for our documents: const, enum, allOf, oneOf,
 * anyOf, type lists, string patterns, lengths and formats, integer and number bounds, arrays and objects).
 * Strings are kept short; the hostile arbitraries below cover size.
 */
function schemaArbitrary(doc: DocName, pointer: string, depth = 0): fc.Arbitrary<unknown> {
  const { doc: d, pointer: p, node } = locate(doc, pointer);
  if (!isObject(node) || depth > 5) return fc.constant(null);
  if ('const' in node) return fc.constant(node.const);
  if (Array.isArray(node.enum)) return fc.constantFrom(...node.enum);
  for (const key of ['oneOf', 'anyOf'] as const) {
    if (Array.isArray(node[key]))
      return fc.oneof(...node[key].map((_: unknown, i: number) => schemaArbitrary(d, `${p}/${key}/${i}`, depth + 1)));
  }
  const types: string[] = Array.isArray(node.type)
    ? node.type
    : node.type
      ? [node.type]
      : node.properties || node.allOf
        ? ['object']
        : ['string', 'integer', 'boolean', 'object'];
  return fc.oneof(...types.map((type) => typedArbitrary(d, p, node, type, depth)));
}

function typedArbitrary(
  doc: DocName,
  pointer: string,
  node: Record<string, any>,
  type: string,
  depth: number,
): fc.Arbitrary<unknown> {
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return fc.integer({ min: node.minimum ?? -1_000_000, max: node.maximum ?? 1_000_000 });
    case 'number':
      return fc.double({ min: node.minimum ?? -1e6, max: node.maximum ?? 1e6, noNaN: true, noDefaultInfinity: true });
    case 'array': {
      const items = node.items ? schemaArbitrary(doc, `${pointer}/items`, depth + 1) : fc.string({ maxLength: 8 });
      const constraints = { minLength: node.minItems ?? 0, maxLength: Math.min(node.maxItems ?? 4, 4) };
      return node.uniqueItems
        ? fc.uniqueArray(items, { ...constraints, selector: (v) => JSON.stringify(v) })
        : fc.array(items, constraints);
    }
    case 'object': {
      const shape = objectShape(doc, pointer);
      const names = Object.keys(shape.properties);
      if (names.length === 0)
        return fc.dictionary(
          fc.string({ minLength: 1, maxLength: 6 }),
          fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.boolean()),
          { maxKeys: 3 },
        );
      const record = Object.fromEntries(names.map((n) => [n, schemaArbitrary(doc, shape.properties[n]!, depth + 1)]));
      return fc.record(record, { requiredKeys: names.filter((n) => shape.required.has(n)) });
    }
    default: {
      const min = node.minLength ?? 0;
      const max = Math.min(node.maxLength ?? 24, 64);
      if (node.format === 'date-time')
        return fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }).map((x) => x.toISOString());
      if (node.format === 'uri') return fc.webUrl();
      if (typeof node.pattern === 'string')
        return fc
          .stringMatching(new RegExp(node.pattern))
          .filter((s) => s.length >= min && s.length <= Math.max(max, 64));
      return fc.string({ minLength: min, maxLength: Math.max(min, max) });
    }
  }
}

// ---- hostile values ----------------------------------------------------------------------------------------------

/**
 * Escapes what a request line cannot carry at all, so deliberate (`%00`) and broken (`%zz`) escapes arrive as written.
 */
export const asTarget = (s: string) =>
  s.replace(/[\uD800-\uDFFF]/g, '%ED%A0%80').replace(/[^\x21-\x7e]|["<>\\^`{|}#?]/gu, (c) => encodeURIComponent(c));

/** encodeURIComponent, with lone surrogates (which it refuses) sent as raw broken UTF-8 escapes instead. */
export function encodeLoosely(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return asTarget(s);
  }
}

/** Path segments and query values that are hostile as written (send them through asTarget). */
export const hostileSegment = fc.constantFrom(
  '.',
  '..',
  '%2e%2e',
  '%2F',
  '%00',
  '%',
  '%zz',
  '%ED%A0%80',
  '%C0%AF',
  '%F0%9F%98%80',
  '%E2%80%AE',
  '%EF%BB%BF',
  'null',
  '[]',
  '{}',
  '-1',
  '0',
  '1e999',
  '99999999999999999999999999',
  "x' OR '1'='1",
  'x%27%3B%20DROP%20TABLE%20tenants%3B--',
  '..%2F..%2Fetc%2Fpasswd',
  '%24%7Bjndi%3Aldap%3A%2F%2Fx%7D',
  'PSN_01ARZ3NDEKTSV4RRFFQ69G5FAV',
  `ten_${'0'.repeat(26)}%00`,
  'a'.repeat(3000),
  '%C3%A9%CC%81',
  '%EF%BF%BF',
  '%F4%90%80%80',
  '__proto__',
  'constructor',
);

/** Strings that break naive handling: unicode edge cases, lone surrogates, NUL and other controls, huge lengths. */
const hostileString = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '\ud800',
    '\udc00x',
    '\uffff',
    '\ufeff',
    '\u202e',
    'e\u0301',
    '👩‍👩‍👧‍👦',
    '\r\n',
    '\t',
    '%00',
    '${x}',
    '{{x}}',
    "'; DROP TABLE tenants; --",
    '<script>',
    '../../etc/passwd',
    '__proto__',
    'x'.repeat(70_000),
    'é'.repeat(40_000),
  ),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: fc.constantFrom('\u0000', '\ud800', '\udfff', '\u0085', '\u2028', 'a'), maxLength: 20 }),
);

/** JSON values that are legal but hostile: huge and odd numbers, deep nesting, prototype keys, hostile strings. */
const hostileJsonValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  fc.constantFrom(
    0,
    -0,
    1e308,
    -1e308,
    2 ** 53 + 1,
    -(2 ** 63),
    0.1,
    1.5,
    null,
    true,
    [],
    {},
    JSON.parse('{"__proto__":{"admin":true}}'),
    { constructor: { prototype: { x: 1 } } },
  ),
  fc.integer({ min: 2, max: 3000 }).map((depth) => JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`)),
  fc.jsonValue({ maxDepth: 3 }),
);

/** Raw JSON texts JSON.stringify cannot produce: duplicate keys, huge literals, escaped surrogates, truncation. */
function hostileJsonText(valid: string): fc.Arbitrary<string> {
  const inner = valid.startsWith('{') && valid.length > 2 ? valid.slice(1, -1) : '"x":1';
  const firstKey = /^"((?:[^"\\]|\\.)*)"/.exec(inner)?.[1] ?? 'x';
  return fc.oneof(
    fc.constantFrom(
      `{"${firstKey}":null,${inner}}`,
      `{${inner},"${firstKey}":{"nested":[1,2,3]}}`,
      `{${inner},${inner}}`,
      `{"__proto__":{"isAdmin":true},${inner}}`,
      `{${inner},"n":1e400}`,
      `{${inner},"n":-1e400}`,
      `{${inner},"n":123456789012345678901234567890}`,
      `{${inner},"s":"\\ud800"}`,
      `{${inner},"s":"\\u0000"}`,
      `{${inner},"d":${'['.repeat(10_000)}${']'.repeat(10_000)}}`,
      `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`,
      `{${inner},"big":"${'x'.repeat(70_000)}"}`,
      '',
      ' ',
      'null',
      'true',
      '0',
      '"x"',
      '[]',
      '[{}]',
      '{',
      '}',
      '{"a":}',
      "{'a':1}",
      '{"a":1,}',
      '\ufeff{}',
      'undefined',
      'NaN',
    ),
    fc.integer({ min: 1, max: Math.max(1, valid.length - 1) }).map((cut) => valid.slice(0, cut)),
    fc.string({ unit: 'binary', maxLength: 200 }),
  );
}

// ---- requests ----------------------------------------------------------------------------------------------------

export interface FuzzRequest {
  doc: DocName;
  operationId: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** Values the test created (real ids, a valid ETag ...), by parameter name: the generator mixes them in often. */
export type Fixtures = Record<string, readonly string[]>;

export interface RequestOptions {
  /** Authorization header values: well-formed first (used most), then any others. */
  authorizations: readonly (string | undefined)[];
  fixtures: Fixtures;
}

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  pointer: string;
  doc: DocName;
}

function parametersOf(op: OperationRef): Parameter[] {
  const out: Parameter[] = [];
  const itemPointer = op.pointer.slice(0, op.pointer.lastIndexOf('/'));
  for (const base of [itemPointer, op.pointer]) {
    const list = locate(op.doc, `${base}/parameters`).node;
    if (!Array.isArray(list)) continue;
    list.forEach((_, i) => {
      const { doc, pointer, node } = locate(op.doc, `${base}/parameters/${i}`);
      if (isObject(node)) out.push({ name: node.name, in: node.in, pointer: `${pointer}/schema`, doc });
    });
  }
  return out;
}

/** Header values as HTTP can carry them (visible Latin-1, no CR/LF/NUL). */
const headerSafe = (s: string) => s.replace(/[^\x20-\x7e\xa0-\xff]/g, '');

function parameterValue(p: Parameter, fixtures: Fixtures): fc.Arbitrary<string> {
  const known = fixtures[p.name];
  const wellFormed = schemaArbitrary(p.doc, p.pointer).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
  if (p.in === 'header') {
    return fc.oneof(
      ...(known ? [{ weight: 4, arbitrary: fc.constantFrom(...known) }] : []),
      { weight: 3, arbitrary: wellFormed.map(headerSafe) },
      {
        weight: 2,
        arbitrary: fc.constantFrom(
          '*',
          '""',
          'W/"x"',
          '"a", "b"',
          '*, "x"',
          ' "x" ',
          'unquoted',
          '"\u00e9"',
          `"${'x'.repeat(8000)}"`,
        ),
      },
    );
  }
  return fc.oneof(
    ...(known ? [{ weight: 6, arbitrary: fc.constantFrom(...known).map(encodeURIComponent) }] : []),
    { weight: 3, arbitrary: wellFormed.map(encodeLoosely) },
    { weight: 2, arbitrary: hostileSegment.map(asTarget) },
    { weight: 1, arbitrary: hostileString.map(encodeLoosely) },
  );
}

function bodyArbitrary(op: OperationRef, fixtures: Fixtures): fc.Arbitrary<{ body?: string; contentType?: string }> {
  const requestBody = op.operation.requestBody ? locate(op.doc, `${op.pointer}/requestBody`) : undefined;
  const content = isObject(requestBody?.node) && isObject(requestBody.node.content) ? requestBody.node.content : {};
  const [mediaType] = Object.keys(content);
  const wrongType = fc.constantFrom(
    'text/plain',
    'application/xml',
    'multipart/form-data; boundary=x',
    'application/json; charset=utf-16',
    'application/x-www-form-urlencoded',
    'application/json',
  );
  if (!mediaType) {
    // No body declared: mostly none, sometimes one anyway.
    return fc.oneof(
      { weight: 4, arbitrary: fc.constant({}) },
      {
        weight: 1,
        arbitrary: fc.tuple(hostileJsonText('{}'), wrongType).map(([body, contentType]) => ({ body, contentType })),
      },
    );
  }
  const fromSchema = schemaArbitrary(
    requestBody!.doc,
    `${requestBody!.pointer}${pointerOf('content', mediaType, 'schema')}`,
  );
  // Top-level members named like a fixture often carry the real value (a real client id, say).
  const known = fc.record(
    Object.fromEntries(Object.entries(fixtures).map(([name, values]) => [name, fc.constantFrom(...values)])),
    { requiredKeys: [] },
  );
  const valid = fc
    .tuple(fromSchema, known, fc.boolean())
    .map(([v, k, use]) => (use && isObject(v) ? { ...v, ...k } : v));
  // A form field holding an object (possibly without a prototype, which String() cannot convert) is sent as its JSON.
  const formValue = (x: unknown) => (typeof x === 'object' && x !== null ? JSON.stringify(x) : String(x));
  const encode =
    mediaType === 'application/x-www-form-urlencoded'
      ? (v: unknown) =>
          new URLSearchParams(
            Object.entries(isObject(v) ? v : { value: v }).map(([k, x]) => [k, formValue(x)]),
          ).toString()
      : (v: unknown) => JSON.stringify(v);
  const mutated = fc.tuple(valid, hostileJsonValue).map(([v, hostile]) => {
    if (!isObject(v) || Object.keys(v).length === 0) return encode(hostile);
    const [first] = Object.keys(v);
    return encode({ ...v, [first!]: hostile });
  });
  const formHostile = fc
    .tuple(
      valid,
      fc.constantFrom(
        'grant_type=client_credentials',
        'client_id=%00',
        'scope=%ED%A0%80',
        'x=1',
        'grant_type',
        '=',
        '&&&',
        `pad=${'x'.repeat(70_000)}`,
        'scope=a,b',
      ),
    )
    .map(([v, extra]) => `${encode(v)}&${extra}`);
  return fc.oneof(
    { weight: 5, arbitrary: valid.map((v) => ({ body: encode(v), contentType: mediaType })) },
    { weight: 3, arbitrary: mutated.map((body) => ({ body, contentType: mediaType })) },
    {
      weight: 3,
      arbitrary: valid
        .chain((v) => (mediaType === 'application/x-www-form-urlencoded' ? formHostile : hostileJsonText(encode(v))))
        .map((body) => ({ body, contentType: mediaType })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(valid, fc.option(wrongType, { nil: undefined }))
        .map(([v, contentType]) => ({ body: encode(v), contentType })),
    },
  );
}

/** Any request for `op`: path, query and header parameters and a body, each well-formed or hostile. */
export function requestArbitrary(op: OperationRef, opts: RequestOptions): fc.Arbitrary<FuzzRequest> {
  const params = parametersOf(op);
  const pathParams = params.filter((p) => p.in === 'path');
  const optional = params.filter((p) => p.in !== 'path');
  const path = fc
    .tuple(...pathParams.map((p) => parameterValue(p, opts.fixtures)))
    .map((values) => pathParams.reduce((acc, p, i) => acc.replace(`{${p.name}}`, values[i]!), op.path));
  const extras = fc.record(
    Object.fromEntries(optional.map((p) => [p.name, fc.option(parameterValue(p, opts.fixtures), { nil: undefined })])),
    { requiredKeys: [] },
  );
  const [first, ...others] = opts.authorizations;
  const authorization = fc.oneof(
    { weight: 8, arbitrary: fc.constant(first) },
    { weight: 1, arbitrary: fc.constantFrom(...(others.length ? others : [first])) },
  );
  const requestId = fc.option(
    fc.oneof(fc.stringMatching(/^[A-Za-z0-9._:-]{8,128}$/), fc.string({ maxLength: 300 }).map(headerSafe)),
    { nil: undefined, freq: 6 },
  );
  return fc
    .tuple(path, extras, bodyArbitrary(op, opts.fixtures), authorization, requestId, fc.boolean())
    .map(([p, values, { body, contentType }, auth, rid, twice]) => {
      const query: string[] = [];
      const headers: Record<string, string> = {};
      for (const param of optional) {
        const v = (values as Record<string, string | undefined>)[param.name];
        if (v === undefined) continue;
        if (param.in === 'query') query.push(`${param.name}=${v}`, ...(twice ? [`${param.name}=${v}`] : []));
        else headers[param.name.toLowerCase()] = v;
      }
      if (auth !== undefined) headers.authorization = auth;
      if (contentType !== undefined) headers['content-type'] = contentType;
      if (rid !== undefined) headers['x-request-id'] = rid;
      return {
        doc: op.doc,
        operationId: op.operationId,
        method: op.method.toUpperCase(),
        path: `${p}${query.length ? `?${query.join('&')}` : ''}`,
        headers,
        body,
      };
    });
}

// ---- what an error body must never carry -------------------------------------------------------------------------

const INTERNALS: [string, RegExp][] = [
  ['a file path', /(?:\/(?:work|home|root|usr|tmp|app|srv)\/|node_modules|[\w-]+\.(?:ts|js|mjs):\d+)/i],
  ['a stack frame', /\bat (?:async )?[\w.<>]+ \(|\n\s+at /],
  ['an error class', /\b(?:TypeError|ReferenceError|RangeError|SyntaxError|Error):/],
  [
    'SQL',
    /\b(?:select\s.+\sfrom|insert\s+into|update\s+\w+\s+set|delete\s+from|syntax error at|violates|constraint|relation\s+"|duplicate key|SQLSTATE|pg_\w+|knex)\b/i,
  ],
  ['a driver or network error', /\b(?:ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|getaddrinfo|undici|ioredis)\b/i],
];

/**
 * Names what `body` leaks (internal paths, stack traces, SQL, any of `secrets`), or returns undefined. `echoed` are
 * values the caller sent and may get back (its own request id), which are not scanned.
 */
export function leakIn(text: string, secrets: readonly string[], echoed: readonly string[] = []): string | undefined {
  const body = echoed.reduce((rest, value) => (value ? rest.split(value).join('') : rest), text);
  for (const [what, pattern] of INTERNALS) if (pattern.test(body)) return what;
  const secret = secrets.find((s) => s.length >= 8 && body.includes(s));
  return secret ? `a secret (${secret.slice(0, 4)}…)` : undefined;
}
