// The gateway file is checked before anything starts: against each plugin's settings schema and against the contract.
// Every mistake is one message naming the file, the line and the setting; `npm run gateway -- validate` is the same
// check for CI (exit 0 or 1).
import { describe, it, expect } from '@jest/globals';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import {
  DEFAULT_GATEWAY_FILE,
  DEFAULT_PLUGIN_SPANS,
  GatewayFileError,
  parseGatewayFile,
} from '../../gateway/gateway-file.js';
import { editedGatewayFile, gatewayFileDirectory, SHIPPED_GATEWAY_FILE } from '../support/gateway-files.js';

describe('gateway-file', () => {
  /** The problems parseGatewayFile reports for `text`, one per line ("" when the file is valid). */
  function problemsOf(text: string): string {
    try {
      parseGatewayFile(text, 'edited.yaml');
      return '';
    } catch (err) {
      expect(err).toBeInstanceOf(GatewayFileError);
      return (err as Error).message;
    }
  }
  const lineOf = (text: string, fragment: string) => text.split('\n').findIndex((l) => l.includes(fragment)) + 1;

  describe('the SHIPPED_GATEWAY_FILE gateway file', () => {
    it('routes the eight contract operations (seven on the gateway) through the plugins in the declared order', () => {
      const def = parseGatewayFile(SHIPPED_GATEWAY_FILE, 'gateway.yaml');
      expect(
        def.routes.map(
          (r) => `${r.route.operationId} ${r.route.method} ${r.route.path} ${r.route.capability} ${r.route.resource}`,
        ),
      ).toEqual([
        'getMe GET /me svc.profile.self.read self',
        'getTenant GET /tenant svc.tenant.info.read tenant',
        'getPerson GET /persons/:personId svc.person.read person',
        'listPersonExtensions GET /persons/:personId/extensions svc.person.metadata.read person_extension',
        'getPersonExtension GET /persons/:personId/extensions/:extensionId svc.person.metadata.read person_extension',
        'putPersonExtension PUT /persons/:personId/extensions/:extensionId svc.person.metadata.write person_extension',
        'deletePersonExtension DELETE /persons/:personId/extensions/:extensionId ' +
          'svc.person.metadata.write person_extension',
      ]);
      expect(def.plugins.map((p) => p.plugin.name)).toEqual([
        'request-id',
        'cors',
        'verify-token',
        'dpop',
        'flood-guard',
        'authorize',
        'rate-limit',
        'body-limit',
        'metering',
      ]);
    });

    it("names the plugins that are a span of their own when traced: the default, or every one with 'all'", () => {
      const spans = (text: string) => parseGatewayFile(text, 'edited.yaml').pluginSpans;
      expect(spans(SHIPPED_GATEWAY_FILE)).toEqual(new Set(DEFAULT_PLUGIN_SPANS));
      expect(spans(editedGatewayFile('tracing:\n  pluginSpans: [verify-token, authorize, rate-limit]\n', ''))).toEqual(
        new Set(DEFAULT_PLUGIN_SPANS),
      );
      expect(spans(editedGatewayFile('pluginSpans: [verify-token, authorize, rate-limit]', 'pluginSpans: all'))).toBe(
        'all',
      );
      expect(spans(editedGatewayFile('pluginSpans: [verify-token, authorize, rate-limit]', 'pluginSpans: []'))).toEqual(
        new Set(),
      );
    });

    it(
      "documents each plugin's defaults: " + 'a plugin listed without config gets the settings the shipped file shows',
      () => {
        const def = parseGatewayFile(SHIPPED_GATEWAY_FILE, 'gateway.yaml');
        for (const { plugin, settings } of def.plugins)
          expect([plugin.name, plugin.settings.parse({})]).toEqual([plugin.name, settings]);
      },
    );
  });

  describe('a gateway file with a mistake is refused with file, line and setting', () => {
    const cases: [string, string, string, RegExp][] = [
      ['an unknown plugin', '  - name: metering', '  - name: metrics', /plugins\[8\]\.name: unknown plugin "metrics"/],
      [
        'an unknown setting of a plugin',
        '{ maxBytes: 65536 }',
        '{ maxBytes: 65536, maxbytes: 1 }',
        /plugins\[7\]\.config\.maxbytes: unknown setting/,
      ],
      [
        'a setting of the wrong type',
        '{ points: 600, durationS: 60 }',
        '{ points: six hundred, durationS: 60 }',
        /plugins\[4\]\.config\.points: .*number/,
      ],
      [
        'an unknown route field',
        '    upstream: backend\n  - operationId: getPersonExtension',
        '    upstream: backend\n    timeout: 5\n  - operationId: getPersonExtension',
        /routes\[3\]\.timeout: unknown setting/,
      ],
      [
        'a capability outside the catalogue',
        'capability: svc.tenant.info.read',
        'capability: svc.tenant.everything',
        /routes\[1\]\.capability: /,
      ],
      [
        "a capability other than the contract's",
        'capability: svc.tenant.info.read',
        'capability: svc.person.read',
        /routes\[1\]\.capability: the contract has getTenant with capability svc.tenant.info.read/,
      ],
      [
        'a contract operation not routed',
        '  - { operationId: getMe, method: GET, path: /me, capability: ' +
          'svc.profile.self.read, resource: self, upstream: backend }\n',
        '',
        /routes: contract operation getMe \(GET \/me\) is not routed/,
      ],
      [
        'an operation routed twice',
        'operationId: getTenant, method: GET, path: /tenant',
        'operationId: getMe, method: GET, path: /tenant',
        /getMe is routed more than once/,
      ],
      [
        'an unknown upstream',
        'resource: tenant, upstream: backend',
        'resource: tenant, upstream: legacy',
        /routes\[1\]\.upstream: unknown upstream "legacy"/,
      ],
      [
        'an override of a gateway-wide plugin on a route',
        'resource: self, upstream: backend }',
        'resource: self, upstream: backend, plugins: { verify-token: { maxStaleS: 1 } } }',
        /routes\[0\]\.plugins\.verify-token: "verify-token" has one setting for the whole gateway/,
      ],
      [
        'a bad route override',
        'resource: self, upstream: backend }',
        'resource: self, upstream: backend, plugins: { rate-limit: { account: { points: 0, durationS: 60 } } } }',
        /routes\[0\]\.plugins\.rate-limit\.account\.points: /,
      ],
      [
        'an unknown plugin given a span of its own',
        'pluginSpans: [verify-token, authorize, rate-limit]',
        'pluginSpans: [verify-token, authorise]',
        /tracing\.pluginSpans\[1\]: unknown plugin "authorise"/,
      ],
      [
        'a span for a plugin the file does not list',
        "  - name: rate-limit        # tenant and account layers, from the tenant's policy unless a route sets its own\n",
        '',
        /tracing\.pluginSpans\[2\]: "rate-limit" is not in the plugins list/,
      ],
      ['broken YAML', 'upstreams:', 'upstreams: [', /edited\.yaml:\d+: /],
    ];
    it.each(cases)('%s', (_name, from, to, expected) => {
      const text = editedGatewayFile(from, to);
      const message = problemsOf(text);
      expect(message).toMatch(/^edited\.yaml: invalid gateway file\n/);
      expect(message).toMatch(expected);
    });

    it('names the line of the offending setting', () => {
      const text = editedGatewayFile('{ maxBytes: 65536 }', '{ maxBytes: -1 }');
      expect(problemsOf(text)).toContain(`edited.yaml:${lineOf(text, 'maxBytes: -1')}: plugins[7].config.maxBytes:`);
      const route = editedGatewayFile(
        '    upstream: backend\n  - operationId: getPersonExtension',
        '    upstream: backend\n    timeout: 5\n  - operationId: getPersonExtension',
      );
      expect(problemsOf(route)).toContain(
        `edited.yaml:${lineOf(route, 'timeout: 5')}: routes[3].timeout: unknown setting`,
      );
    });

    const AUTHORIZE =
      '  - name: authorize         # one PDP decision, no cache: 403 | 404 (folded) | 503 authorization_unavailable\n' +
      '    config: { timeoutMs: 2000 }\n';
    const VERIFY =
      '  - name: verify-token      # 401 invalid_token | 403 profile_not_supported | 503 token_verification_unavailable\n' +
      '    config: { cacheMaxAgeS: 600, maxStaleS: 3600, refetchCooldownS: 10, timeoutMs: 2000 }\n';

    it.each([
      ['PDP authorization', AUTHORIZE, 'authorize'],
      ['token verification', VERIFY, 'verify-token'],
    ])('refuses a file without %s', (_name, block, name) => {
      expect(problemsOf(editedGatewayFile(block, ''))).toMatch(
        new RegExp(`plugins: "${name}" is missing: every route needs token verification and PDP authorization`),
      );
    });

    it('refuses PDP authorization placed before token verification', () => {
      const text = editedGatewayFile(AUTHORIZE, '').replace(VERIFY, AUTHORIZE + VERIFY);
      expect(problemsOf(text)).toContain(
        `edited.yaml:${lineOf(text, '- name: authorize')}: plugins[2].name: "authorize" must come after "verify-token"`,
      );
    });

    it("accepts an extra route to another upstream and a route's own rate-limit window", () => {
      const text =
        `${editedGatewayFile('upstreams:\n', 'upstreams:\n  status:\n    url: http://127.0.0.1:9\n')}` +
        `  - { operationId: getStatus, method: GET, path: /status, capability: svc.profile.self.read, ` +
        `resource: self, upstream: status, plugins: { rate-limit: { account: { points: 5, durationS: 60 } } } }\n`;
      const def = parseGatewayFile(text, 'edited.yaml');
      expect(def.routes.at(-1)).toMatchObject({
        route: { operationId: 'getStatus', upstream: 'status' },
        settings: { 'rate-limit': { account: { points: 5, durationS: 60 } } },
      });
    });
  });

  describe('npm run gateway -- validate <file>', () => {
    const gateway = (args: string[], env: Record<string, string> = {}) =>
      promisify(execFile)('npm', ['run', '-s', 'gateway', '--', ...args], {
        cwd: new URL('../..', import.meta.url).pathname,
        env: { ...process.env, ...env },
      })
        .then(({ stdout }) => ({ code: 0, out: stdout }))
        .catch((err: { code: number; stderr: string }) => ({ code: err.code, out: err.stderr }));
    const run = (file: string) => gateway(['validate', file]);

    it('exits 0 for the SHIPPED_GATEWAY_FILE file and 1 with the message for a bad one, starting nothing', async () => {
      const files = gatewayFileDirectory('gateway-file');
      const bad = files.write(editedGatewayFile('  - name: metering', '  - name: metrics'));
      const [good, refused] = await Promise.all([run(DEFAULT_GATEWAY_FILE), run(bad)]).finally(files.remove);
      expect(good).toEqual({
        code: 0,
        out: expect.stringContaining('valid (7 routes; plugins in order: request-id → cors → verify-token'),
      });
      expect(refused.code).toBe(1);
      expect(refused.out).toMatch(
        new RegExp(`^${bad}: invalid gateway file\\n  ${bad}:28: plugins\\[8\\]\\.name: unknown plugin "metrics"`, 'm'),
      );
    });

    it('validates the file the gateway would read when none is named, and answers --help without starting', async () => {
      const files = gatewayFileDirectory('gateway-file-default');
      const bad = files.write(editedGatewayFile('  - name: metering', '  - name: metrics'));
      const [shipped, configured, help] = await Promise.all([
        gateway(['validate'], { GATEWAY_CONFIG: '' }),
        gateway(['validate'], { GATEWAY_CONFIG: bad }),
        gateway(['--help']),
      ]).finally(files.remove);
      expect(shipped).toEqual({ code: 0, out: expect.stringContaining(`${DEFAULT_GATEWAY_FILE}: valid`) });
      expect(configured.code).toBe(1);
      expect(configured.out).toContain(`${bad}: invalid gateway file`);
      expect(help).toEqual({ code: 0, out: expect.stringMatching(/^usage: npm run gateway/) });
    });
  });
});
