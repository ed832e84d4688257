// Platform identifiers: a type prefix and a lowercase ULID
// (Crockford base32, 26 chars), as the contract's patterns require.
import { ulid } from 'ulid';

export type IdPrefix = 'ten' | 'psn' | 'acc' | 'key';
const ID_BODY = '[0-9a-hjkmnp-tv-z]{26}';
const idPattern = (prefix: IdPrefix) => new RegExp(`^${prefix}_${ID_BODY}$`);

export const newId = (prefix: IdPrefix) => `${prefix}_${ulid().toLowerCase()}`;
export const isId = (prefix: IdPrefix, value: unknown): value is string =>
  typeof value === 'string' && idPattern(prefix).test(value);

/** Contract §2: extension ids, assigned by the platform at registration. */
export const EXTENSION_ID = /^[a-z][a-z0-9_]{2,63}$/;
export const isExtensionId = (value: unknown): value is string => typeof value === 'string' && EXTENSION_ID.test(value);
