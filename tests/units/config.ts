import { describe, it, expect } from '@jest/globals';
import { ConfigError, loadConfig } from '../../common/config.js';

describe('config', () => {
  describe('configuration', () => {
    it('applies the documented defaults of platform-interfaces.md', () => {
      const c = loadConfig({});
      expect(c).toMatchObject({
        ISSUER_PORT: 3000,
        AUTH_URL: 'http://127.0.0.1:3000',
        GATEWAY_PORT: 8080,
        PDP_PORT: 8181,
        BACKEND_PORT: 8090,
        ISSUER_ENABLE_CLIENT_CREDENTIALS: false,
        ACCESS_TOKEN_TTL_S: 900,
      });
      expect(c.DATABASE_URL).toBeUndefined();
      expect(c.REDIS_URL).toBeUndefined();
    });

    it('rejects bad values naming every offending variable', () => {
      let error: unknown;
      try {
        loadConfig({
          GATEWAY_PORT: 'eighty',
          AUTH_URL: 'not a url',
          ACCESS_TOKEN_TTL_S: '3600',
          ISSUER_ENABLE_CLIENT_CREDENTIALS: 'yes',
        });
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ConfigError);
      const message = (error as Error).message;
      for (const name of ['GATEWAY_PORT', 'AUTH_URL', 'ACCESS_TOKEN_TTL_S', 'ISSUER_ENABLE_CLIENT_CREDENTIALS'])
        expect(message).toContain(name);
    });

    it('refuses a DATABASE_URL or REDIS_URL of another scheme, in one line and with the password hidden', () => {
      expect(() => loadConfig({ DATABASE_URL: 'mysql://u:pw@db/x', REDIS_URL: 'localhost:6379' })).toThrow(
        new ConfigError(
          'Invalid configuration: DATABASE_URL="mysql://u:***@db/x": must be a postgres:// or postgresql:// URL; ' +
            'REDIS_URL="localhost:6379": must be a redis:// or rediss:// URL',
        ),
      );
      expect(loadConfig({ DATABASE_URL: 'postgresql://db/x', REDIS_URL: 'rediss://cache:6380' })).toMatchObject({
        DATABASE_URL: 'postgresql://db/x',
        REDIS_URL: 'rediss://cache:6380',
      });
    });

    it('refuses ISSUER_JWKS and ISSUER_JWKS_FILE together', () => {
      expect(() => loadConfig({ ISSUER_JWKS: '{"keys":[]}', ISSUER_JWKS_FILE: '/tmp/k.json' })).toThrow(
        /set one, not both/,
      );
    });

    it('normalises AUTH_URL without a trailing slash, as the iss claim must match exactly', () => {
      expect(loadConfig({ AUTH_URL: 'http://127.0.0.1:3000/' }).AUTH_URL).toBe('http://127.0.0.1:3000');
    });
  });
});
