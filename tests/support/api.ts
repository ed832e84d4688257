// Calls to the public API that are held to the OpenAPI document: every response is validated for its operation.
import { assertResponseMatches, captureResponse } from './openapi.js';

export interface CheckedResponse {
  status: number;
  headers: Headers;
  body: any;
}

/** GET/PUT/DELETE on `baseUrl + path`; throws if the answer is not one the document declares for `operationId`. */
export async function callApi(
  baseUrl: string,
  operationId: string,
  path: string,
  token?: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<CheckedResponse> {
  const res = await fetch(`${baseUrl}${path}`, {
    method: init.method ?? 'GET',
    headers: { ...(token && { authorization: `Bearer ${token}` }), ...init.headers },
    body: init.body,
  });
  const captured = await captureResponse(res);
  const body = assertResponseMatches('public', operationId, captured);
  return { status: res.status, headers: res.headers, body };
}
