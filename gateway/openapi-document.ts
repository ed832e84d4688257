// The public API's OpenAPI document (docs/openapi/public-api.yaml), served as JSON at GET /v1/openapi.json.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

export const PUBLIC_API_DOCUMENT_PATH = new URL('../docs/openapi/public-api.yaml', import.meta.url);

/** Parsed once at start; the document is self-contained, so it is served as is. */
export const loadPublicApiDocument = (): Record<string, unknown> => parse(readFileSync(PUBLIC_API_DOCUMENT_PATH, 'utf8'));
