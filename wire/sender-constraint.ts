// Sender-constrained tokens (issue 49), the names both sides share: the issuer advertises and accepts DPoP proofs
// (RFC 9449) signed with these algorithms, and the gateway's dpop plugin allows the same ones by default. Asymmetric
// only (§4.2: a proof is signed with the client's private key and verified with the public key in its header).
export const DPOP_ALGS = ['ES256', 'ES384', 'PS256', 'PS384', 'RS256', 'EdDSA', 'Ed25519'] as const;
export type DpopAlg = (typeof DPOP_ALGS)[number];

/** How a confidential app authenticates at the token endpoint (admin API `tokenEndpointAuthMethod`). */
export const TOKEN_ENDPOINT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'private_key_jwt'] as const;
export type TokenEndpointAuthMethod = (typeof TOKEN_ENDPOINT_AUTH_METHODS)[number];

/** Algorithms a private_key_jwt client assertion may be signed with (the app's registered EC or RSA keys). */
export const CLIENT_ASSERTION_ALGS = ['ES256', 'ES384', 'PS256', 'PS384', 'RS256'] as const;

/** Security profiles an app may be registered with; `fapi2` is the FAPI 2.0 Security Profile. */
export const SECURITY_PROFILES = ['fapi2'] as const;
export type SecurityProfile = (typeof SECURITY_PROFILES)[number];
