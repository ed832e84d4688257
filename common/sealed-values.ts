// Values the server hands out and reads back without storing them (the pages' signed cookies): `body.mac`, where
// mac = HMAC-SHA256(key, "<purpose>|body") in base64url, so a value sealed for one purpose opens for no other.
import { createHmac, createSecretKey } from 'node:crypto';
import { sameSecret } from './secrets.js';

export interface Sealer {
  /** `body` must be base64url (it may not hold the '.' separator). */
  seal(body: string): string;
  /** The body of a value this sealer sealed; undefined for anything else. */
  open(sealed: unknown): string | undefined;
}

export function sealer(key: string | Buffer, purpose: string): Sealer {
  // One KeyObject for every seal and open (internal-context.ts says why not the bytes).
  const keyObject = createSecretKey(typeof key === 'string' ? Buffer.from(key) : key);
  const mac = (body: string) => createHmac('sha256', keyObject).update(`${purpose}|${body}`).digest('base64url');
  return {
    seal: (body) => `${body}.${mac(body)}`,
    open(sealed) {
      if (typeof sealed !== 'string') return undefined;
      const [body, given, extra] = sealed.split('.');
      return body && given && extra === undefined && sameSecret(given, mac(body)) ? body : undefined;
    },
  };
}
