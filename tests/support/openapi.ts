// The contract in machine-readable form, for tests: loads docs/openapi/*.yaml and checks real HTTP responses
// against them (declared status, required headers, content type, body schema). Bodies are validated with ajv's
// JSON Schema 2020-12 engine (OpenAPI 3.1's dialect); every document is registered whole under its own $id, so
// `#/components/...` and `./public-api.yaml#/...` references resolve exactly as Spectral resolves them.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { ErrorObject, ValidateFunction } from 'ajv';

export type DocName = 'public' | 'token' | 'admin';
export type OpenApiDocument = Record<string, unknown>;
export type HeaderBag = Headers | Record<string, string | string[] | number | undefined>;

export interface ApiResponse {
  status: number;
  headers: HeaderBag;
  /** Parsed JSON, or the raw text (parsed here when the media type is JSON); undefined/'' for no body. */
  body: unknown;
}

export interface OperationRef {
  doc: DocName;
  operationId: string;
  method: string;
  path: string;
  /** JSON pointer of the operation object inside its document. */
  pointer: string;
  operation: Record<string, unknown>;
}

const FILES: Record<DocName, string> = {
  public: 'public-api.yaml',
  token: 'token-api.yaml',
  admin: 'admin-api.yaml',
};
const DOC_OF_FILE = new Map(Object.entries(FILES).map(([doc, file]) => [file, doc as DocName]));
/** Synthetic base for the documents' ids inside ajv; `.invalid` never resolves on a network. */
const ID_BASE = 'https://contract.invalid/openapi/';
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

const Ajv2020 = Ajv2020Module.default;
const addFormats = addFormatsModule.default;

/** A JSON object (not an array, not null). */
export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

// ---------------------------------------------------------------------------------------------------------------
// Loading

let documents: Readonly<Record<DocName, OpenApiDocument>> | undefined;

function readDocument(doc: DocName): OpenApiDocument {
  const url = new URL(`../../docs/openapi/${FILES[doc]}`, import.meta.url);
  const parsed: unknown = parse(readFileSync(url, 'utf8'));
  if (!isObject(parsed) || typeof parsed.openapi !== 'string')
    throw new Error(`${FILES[doc]} is not an OpenAPI document`);
  return parsed;
}

/** The three documents, parsed once (treat as read-only; use publicApiDocument() for a copy you may change). */
export function loadApiDocuments(): Readonly<Record<DocName, OpenApiDocument>> {
  documents ??= Object.freeze({
    public: readDocument('public'),
    token: readDocument('token'),
    admin: readDocument('admin'),
  });
  return documents;
}

/**
 * The public API document as one self-contained plain object (what GET {base_url}/openapi.json serves).
 * A fresh copy on every call, so callers may change it (e.g. fill in the server default).
 */
export function publicApiDocument(): OpenApiDocument {
  return structuredClone(loadApiDocuments().public);
}

// ---------------------------------------------------------------------------------------------------------------
// JSON pointers and OpenAPI-level $ref resolution (responses, headers, parameters, examples)

const escapeToken = (t: string) => t.replace(/~/g, '~0').replace(/\//g, '~1');
const unescapeToken = (t: string) => t.replace(/~1/g, '/').replace(/~0/g, '~');
export const pointerOf = (...tokens: (string | number)[]) => tokens.map((t) => `/${escapeToken(String(t))}`).join('');

function getAt(root: unknown, pointer: string): unknown {
  if (pointer === '') return root;
  let node: unknown = root;
  for (const raw of pointer.slice(1).split('/')) {
    const token = unescapeToken(raw);
    if (Array.isArray(node)) node = node[Number(token)];
    else if (isObject(node)) node = node[token];
    else return undefined;
  }
  return node;
}

export interface Located {
  doc: DocName;
  pointer: string;
  node: unknown;
}

/** Follows `$ref` chains (local or to a sibling document) starting at `pointer` in `doc`. */
export function locate(doc: DocName, pointer: string): Located {
  const docs = loadApiDocuments();
  let here: Located = { doc, pointer, node: getAt(docs[doc], pointer) };
  for (let hops = 0; isObject(here.node) && typeof here.node.$ref === 'string'; hops++) {
    if (hops > 20) throw new Error(`$ref loop at ${FILES[doc]}#${pointer}`);
    const ref = here.node.$ref;
    const hash = ref.indexOf('#');
    const file = hash === -1 ? ref : ref.slice(0, hash);
    const target = hash === -1 ? '' : decodeURIComponent(ref.slice(hash + 1));
    const targetDoc = file === '' ? here.doc : DOC_OF_FILE.get(file.replace(/^\.\//, ''));
    if (!targetDoc) throw new Error(`unsupported $ref ${ref} in ${FILES[here.doc]}#${here.pointer}`);
    const node = getAt(docs[targetDoc], target);
    if (node === undefined) throw new Error(`dangling $ref ${ref} in ${FILES[here.doc]}#${here.pointer}`);
    here = { doc: targetDoc, pointer: target, node };
  }
  return here;
}

// ---------------------------------------------------------------------------------------------------------------
// Operations

let operationIndex: Map<string, OperationRef> | undefined;

/** Every operation of a document, in document order. */
export function operationsOf(doc: DocName): OperationRef[] {
  const paths = loadApiDocuments()[doc].paths;
  const out: OperationRef[] = [];
  if (!isObject(paths)) return out;
  for (const [path, item] of Object.entries(paths)) {
    if (!isObject(item)) continue;
    for (const method of METHODS) {
      const operation = item[method];
      if (!isObject(operation) || typeof operation.operationId !== 'string') continue;
      out.push({
        doc,
        operationId: operation.operationId,
        method,
        path,
        pointer: pointerOf('paths', path, method),
        operation,
      });
    }
  }
  return out;
}

export function findOperation(doc: DocName, operationId: string): OperationRef {
  if (!operationIndex) {
    operationIndex = new Map();
    for (const d of Object.keys(FILES) as DocName[]) {
      for (const op of operationsOf(d)) {
        const key = `${d} ${op.operationId}`;
        if (operationIndex.has(key)) throw new Error(`duplicate operationId ${op.operationId} in ${FILES[d]}`);
        operationIndex.set(key, op);
      }
    }
  }
  const op = operationIndex.get(`${doc} ${operationId}`);
  if (!op) throw new Error(`operationId ${operationId} is not declared in ${FILES[doc]}`);
  return op;
}

/** The response object declared for `status` (exact code, then `4XX`-style range, then `default`), dereferenced. */
export function declaredResponse(doc: DocName, operationId: string, status: number): Located | undefined {
  const op = findOperation(doc, operationId);
  const responses = op.operation.responses;
  if (!isObject(responses)) return undefined;
  for (const key of [String(status), `${String(status)[0]}XX`, 'default']) {
    if (key in responses) return locate(doc, `${op.pointer}/responses/${escapeToken(key)}`);
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Schema validation

let ajvInstance: InstanceType<typeof Ajv2020> | undefined;
const validators = new Map<string, ValidateFunction>();

function ajv(): InstanceType<typeof Ajv2020> {
  if (ajvInstance) return ajvInstance;
  const instance = new Ajv2020({
    strict: true, // unknown keywords in a schema are errors: a typo in a document fails loudly
    strictTypes: false, // OpenAPI-style `allOf: [{$ref}, {properties: ...}]` narrowing has no `type` on each branch
    strictTuples: false,
    strictRequired: false,
    allowUnionTypes: true,
    allErrors: true,
  });
  addFormats(instance);
  // OpenAPI 3.1 dialect keywords that carry no validation here (oneOf does the work behind `discriminator`).
  instance.addVocabulary(['discriminator', 'example', 'xml', 'externalDocs']);
  // ajv compiles a registered document's root before resolving a fragment of it; its top-level OpenAPI fields
  // are inert there. Nothing below the root is compiled unless a validator points into it.
  instance.addVocabulary([
    'openapi',
    'info',
    'jsonSchemaDialect',
    'servers',
    'paths',
    'webhooks',
    'components',
    'security',
    'tags',
  ]);
  const docs = loadApiDocuments();
  for (const doc of Object.keys(FILES) as DocName[]) {
    instance.addSchema({ ...docs[doc], $id: `${ID_BASE}${FILES[doc]}` });
  }
  ajvInstance = instance;
  return instance;
}

/** A compiled validator for the schema at `pointer` of `doc` (its $refs resolve within and across documents). */
export function schemaValidator(doc: DocName, pointer: string): ValidateFunction {
  const uri = `${ID_BASE}${FILES[doc]}#${pointer.split('/').map(encodeURIComponent).join('/')}`;
  let validate = validators.get(uri);
  if (!validate) {
    if (getAt(loadApiDocuments()[doc], pointer) === undefined) throw new Error(`no schema at ${FILES[doc]}#${pointer}`);
    validate = ajv().getSchema(uri);
    if (!validate) throw new Error(`ajv could not resolve ${uri}`);
    validators.set(uri, validate);
  }
  return validate;
}

const formatErrors = (errors: ErrorObject[] | null | undefined): string =>
  (errors ?? [])
    .map((e) => {
      const where = e.instancePath || '(root)';
      const extra =
        e.keyword === 'additionalProperties' || e.keyword === 'unevaluatedProperties'
          ? ` (${JSON.stringify(
              (e.params as { additionalProperty?: string; unevaluatedProperty?: string }).additionalProperty ??
                (e.params as { unevaluatedProperty?: string }).unevaluatedProperty,
            )})`
          : e.keyword === 'enum' || e.keyword === 'const'
            ? ` (${JSON.stringify(e.params)})`
            : '';
      return `${where} ${e.message ?? e.keyword}${extra} [${e.schemaPath}]`;
    })
    .join('; ');

/** Validates `value` against the schema at `pointer`; returns a list of readable problems (empty = valid). */
export function schemaProblems(doc: DocName, pointer: string, value: unknown): string[] {
  const validate = schemaValidator(doc, pointer);
  return validate(value) ? [] : [formatErrors(validate.errors)];
}

/** Validates `value` against components/schemas/<name> of `doc`; throws a descriptive Error when invalid. */
export function assertSchema(doc: DocName, schemaName: string, value: unknown): void {
  const problems = schemaProblems(doc, pointerOf('components', 'schemas', schemaName), value);
  if (problems.length) throw new Error(`${FILES[doc]} ${schemaName}: ${problems.join('; ')}\nvalue: ${excerpt(value)}`);
}

// ---------------------------------------------------------------------------------------------------------------
// Responses

function headerValue(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function' && typeof (headers as Headers).has === 'function') {
    return (headers as Headers).get(name) ?? undefined;
  }
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers as Record<string, unknown>)) {
    if (key.toLowerCase() !== wanted || value === undefined) continue;
    return Array.isArray(value) ? value.map(String).join(', ') : String(value);
  }
  return undefined;
}

/** Header values are strings; a schema of type integer/number/boolean is checked against the converted value. */
function headerCandidates(raw: string): unknown[] {
  const out: unknown[] = [raw];
  if (/^-?\d+(\.\d+)?$/.test(raw.trim())) out.push(Number(raw.trim()));
  if (raw === 'true' || raw === 'false') out.push(raw === 'true');
  return out;
}

function excerpt(value: unknown): string {
  let text: string;
  try {
    text = typeof value === 'string' ? value : JSON.stringify(value);
  } catch {
    text = String(value);
  }
  return text === undefined ? 'undefined' : text.length > 600 ? `${text.slice(0, 600)}...` : text;
}

const isEmptyBody = (body: unknown) =>
  body === undefined || body === null || body === '' || (body instanceof Uint8Array && body.length === 0);

const isJsonMediaType = (mt: string) => mt === 'application/json' || mt.endsWith('+json');

/**
 * Throws a descriptive Error unless `res` is a response the document declares for `operationId`: the status is
 * declared; every required header is present and every declared header present matches its schema; the content
 * type is one of the declared media types (or there is no body when none is declared); the body matches the
 * schema. Also checks two contract invariants: a body `requestId` equals `x-request-id`, a body `etag` equals the
 * `etag` header. Returns the (parsed) body.
 */
export function assertResponseMatches(doc: DocName, operationId: string, res: ApiResponse): unknown {
  const op = findOperation(doc, operationId);
  const label = `${FILES[doc]} ${operationId} (${op.method.toUpperCase()} ${op.path}) -> ${res.status}`;
  const fail = (what: string): never => {
    throw new Error(`OpenAPI mismatch, ${label}: ${what}\nbody: ${excerpt(res.body)}`);
  };

  const declared = declaredResponse(doc, operationId, res.status);
  if (!declared) {
    const statuses = isObject(op.operation.responses) ? Object.keys(op.operation.responses).join(', ') : 'none';
    return fail(`status ${res.status} is not declared (declared: ${statuses})`);
  }
  const response = declared.node;
  if (!isObject(response)) return fail('response object is malformed');

  // Headers
  const headers = isObject(response.headers) ? response.headers : {};
  for (const name of Object.keys(headers)) {
    if (name.toLowerCase() === 'content-type') continue; // OpenAPI ignores a Content-Type header definition
    const header = locate(declared.doc, `${declared.pointer}/headers/${escapeToken(name)}`);
    if (!isObject(header.node)) return fail(`header ${name} definition is malformed`);
    const raw = headerValue(res.headers, name);
    if (raw === undefined) {
      if (header.node.required === true) fail(`required header "${name}" is missing`);
      continue;
    }
    if (!isObject(header.node.schema)) continue;
    const schemaPointer = `${header.pointer}/schema`;
    const ok = headerCandidates(raw).some(
      (candidate) => schemaProblems(header.doc, schemaPointer, candidate).length === 0,
    );
    if (!ok)
      fail(
        `header "${name}: ${raw}" does not match its schema: ` +
          `${schemaProblems(header.doc, schemaPointer, raw).join('; ')}`,
      );
  }

  // Content type and body
  const content = isObject(response.content) ? response.content : undefined;
  if (!content || Object.keys(content).length === 0) {
    if (!isEmptyBody(res.body)) fail('a body was sent but the response declares no content');
    return undefined;
  }
  const contentType = headerValue(res.headers, 'content-type');
  if (!contentType) return fail(`content-type is missing (declared: ${Object.keys(content).join(', ')})`);
  const mediaType = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  if (!(mediaType in content))
    return fail(`content-type "${contentType}" is not declared (declared: ${Object.keys(content).join(', ')})`);

  let body = res.body;
  if (body instanceof Uint8Array) body = new TextDecoder().decode(body);
  if (typeof body === 'string' && isJsonMediaType(mediaType)) {
    try {
      body = JSON.parse(body) as unknown;
    } catch {
      return fail(`body is not valid JSON for ${mediaType}`);
    }
  }
  const media = content[mediaType];
  if (isObject(media) && media.schema !== undefined) {
    const schemaPointer = `${declared.pointer}/content/${escapeToken(mediaType)}/schema`;
    const problems = schemaProblems(declared.doc, schemaPointer, body);
    if (problems.length) fail(`body does not match the schema: ${problems.join('; ')}`);
  }
  // A stream of JSON lines (NDJSON) declares the schema of one line as `x-line-schema`: every line is held to it.
  if (isObject(media) && media['x-line-schema'] !== undefined && typeof body === 'string') {
    const linePointer = `${declared.pointer}/content/${escapeToken(mediaType)}/x-line-schema`;
    body
      .split('\n')
      .slice(0, -1)
      .forEach((line, i) => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(line);
        } catch {
          fail(`line ${i + 1} is not JSON`);
        }
        const problems = schemaProblems(declared.doc, linePointer, parsed);
        if (problems.length) fail(`line ${i + 1} does not match x-line-schema: ${problems.join('; ')}`);
      });
    if (body !== '' && !body.endsWith('\n')) fail('the last line does not end with a newline (the stream was cut)');
  }

  // Contract invariants across headers and body
  if (isObject(body)) {
    const requestIdHeader = headerValue(res.headers, 'x-request-id');
    if (typeof body.requestId === 'string' && requestIdHeader !== undefined && body.requestId !== requestIdHeader) {
      fail(`body requestId "${body.requestId}" differs from x-request-id "${requestIdHeader}"`);
    }
    const etagHeader = headerValue(res.headers, 'etag');
    if (typeof body.etag === 'string' && etagHeader !== undefined && body.etag !== etagHeader) {
      fail(`body etag ${body.etag} differs from the etag header ${etagHeader}`);
    }
  }
  return body;
}

/** Reads a fetch() Response into the shape assertResponseMatches takes (the body as text; JSON is parsed there). */
export async function captureResponse(res: Response): Promise<ApiResponse> {
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text };
}

/**
 * Throws unless `body` matches the request body schema `operationId` declares for `contentType`
 * (default: its only media type). Form bodies are passed as plain objects of strings.
 */
export function assertRequestMatches(doc: DocName, operationId: string, body: unknown, contentType?: string): void {
  const op = findOperation(doc, operationId);
  const requestBody = locate(doc, `${op.pointer}/requestBody`);
  if (!isObject(requestBody.node) || !isObject(requestBody.node.content)) {
    throw new Error(`${FILES[doc]} ${operationId} declares no request body`);
  }
  const types = Object.keys(requestBody.node.content);
  const mediaType = contentType ?? (types.length === 1 ? types[0] : undefined);
  if (!mediaType || !types.includes(mediaType)) {
    throw new Error(
      `${FILES[doc]} ${operationId}: request content type ` +
        `${String(contentType)} not declared (declared: ${types.join(', ')})`,
    );
  }
  const problems = schemaProblems(
    requestBody.doc,
    `${requestBody.pointer}/content/${escapeToken(mediaType)}/schema`,
    body,
  );
  if (problems.length)
    throw new Error(`${FILES[doc]} ${operationId} request body: ${problems.join('; ')}\nbody: ${excerpt(body)}`);
}
