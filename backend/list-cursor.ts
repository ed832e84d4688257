// Opaque, tamper-proof cursors for listing a person's extensions: the last extension id of a page plus an HMAC
// bound to the tenant, the app and the person, so a cursor cannot be edited or replayed to list anything else.
import { createHmac, createSecretKey, hkdfSync, timingSafeEqual } from 'node:crypto';
import { isExtensionId } from '../common/ids.js';

export interface CursorScope {
  tenantId: string;
  clientId: string;
  personId: string;
}

const MAC_BYTES = 16;

/** `secret` is a configured deployment secret; the cursor key is derived from it for this use only. */
export function listCursors(secret: string) {
  // A KeyObject made once (common/internal-context.ts says why).
  const key = createSecretKey(Buffer.from(hkdfSync('sha256', secret, '', 'person-extension-list-cursor/v1', 32)));
  const mac = (scope: CursorScope, after: string) =>
    createHmac('sha256', key)
      .update(JSON.stringify([scope.tenantId, scope.clientId, scope.personId, after]))
      .digest()
      .subarray(0, MAC_BYTES);
  const encode = (scope: CursorScope, after: string) =>
    `${Buffer.from(after).toString('base64url')}.${mac(scope, after).toString('base64url')}`;
  return {
    encode,
    /** The extension id the page continues after, or undefined for a cursor this scope did not issue. */
    decode(scope: CursorScope, cursor: string): string | undefined {
      const [payload, tag, ...rest] = cursor.split('.');
      if (!payload || !tag || rest.length) return undefined;
      const after = Buffer.from(payload, 'base64url').toString('utf8');
      if (!isExtensionId(after)) return undefined;
      const expected = encode(scope, after); // canonical form: no alternative spellings of the same cursor
      const given = Buffer.from(cursor);
      return given.length === expected.length && timingSafeEqual(given, Buffer.from(expected)) ? after : undefined;
    },
  };
}
export type ListCursors = ReturnType<typeof listCursors>;
