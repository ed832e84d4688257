// The documents the gateway serves beside the API, without a token: the public API's OpenAPI document
// (docs/openapi/public-api.yaml) as JSON at GET /v1/openapi.json, and the developer guide (docs/api-guide.md) at
// GET /v1/api-guide.md.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

const PUBLIC_API_DOCUMENT_PATH = new URL('../docs/openapi/public-api.yaml', import.meta.url);

let publicApiDocument: Readonly<Record<string, unknown>> | undefined;

/**
 * Parsed once per process (the file ships with the code): the gateway file's check of its routes and the served JSON
 * read the same object, also when one process starts several gateways. Read only. The document is self-contained, so it
 * is served as is.
 */
export const loadPublicApiDocument = (): Readonly<Record<string, unknown>> =>
  (publicApiDocument ??= parse(readFileSync(PUBLIC_API_DOCUMENT_PATH, 'utf8')));

const API_GUIDE_PATH = new URL('../docs/api-guide.md', import.meta.url);

/** Read once at start. */
export const loadApiGuide = (): string => readFileSync(API_GUIDE_PATH, 'utf8');
