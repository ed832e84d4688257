// Calls of contract §4.4–4.8 through the gateway, each answer held to public-api.yaml, and extension registration.
import { callApi, type CheckedResponse } from './api.js';
import type { AdminClient } from './admin.js';

export const PERSON_SCOPES = 'svc.person.read svc.person.metadata.read svc.person.metadata.write';

export function personApi(baseUrl: string) {
  const extensionPath = (personId: string, extensionId: string) => `/persons/${personId}/extensions/${extensionId}`;
  return {
    getPerson: (token: string, personId: string) => callApi(baseUrl, 'getPerson', `/persons/${personId}`, token),
    list: (token: string, personId: string, query = '', headers: Record<string, string> = {}) =>
      callApi(baseUrl, 'listPersonExtensions', `/persons/${personId}/extensions${query}`, token, { headers }),
    get: (token: string, personId: string, extensionId: string, headers: Record<string, string> = {}) =>
      callApi(baseUrl, 'getPersonExtension', extensionPath(personId, extensionId), token, { headers }),
    /** `body` as an object is sent as JSON; a string is sent as it is. */
    put: (
      token: string,
      personId: string,
      extensionId: string,
      body: unknown,
      headers: Record<string, string>,
    ): Promise<CheckedResponse> =>
      callApi(baseUrl, 'putPersonExtension', extensionPath(personId, extensionId), token, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }),
    delete: (token: string, personId: string, extensionId: string, headers: Record<string, string> = {}) =>
      callApi(baseUrl, 'deletePersonExtension', extensionPath(personId, extensionId), token, {
        method: 'DELETE',
        headers,
      }),
  };
}
export type PersonApi = ReturnType<typeof personApi>;

/** Any object whose `note` is a string: room for data of an exact size. */
export const OPEN_SCHEMA = { type: 'object', properties: { note: { type: 'string' } } };

let names = 0;
/** Registers an extension owned by `clientId` (held to admin-api.yaml) and returns its platform-assigned id. */
export async function registerExtension(
  admin: AdminClient,
  clientId: string,
  schemas: Record<string, unknown> = { 1: OPEN_SCHEMA },
): Promise<string> {
  const res = await admin.checked('createExtension', 'POST', `/clients/${clientId}/extensions`, {
    name: `extension ${++names}`,
    schemas,
  });
  if (res.status !== 201) throw new Error(`registration failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.extensionId as string;
}
