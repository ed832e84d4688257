// The documents the gateway serves beside the API, without a token: the public API's OpenAPI document
// (docs/openapi/public-api.yaml) as JSON at GET /v1/openapi.json, and the developer guide (docs/api-guide.md) at
// GET /v1/api-guide.md.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

const PUBLIC_API_DOCUMENT_PATH = new URL('../docs/openapi/public-api.yaml', import.meta.url);

/** Parsed once at start; the document is self-contained, so it is served as is. */
export const loadPublicApiDocument = (): Record<string, unknown> =>
  parse(readFileSync(PUBLIC_API_DOCUMENT_PATH, 'utf8'));

const API_GUIDE_PATH = new URL('../docs/api-guide.md', import.meta.url);

/** Read once at start. */
export const loadApiGuide = (): string => readFileSync(API_GUIDE_PATH, 'utf8');
