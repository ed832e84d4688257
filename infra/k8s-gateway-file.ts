// Writes infra/k8s/gateway-file.yaml: the ConfigMap holding the gateway file, gateway/gateway.yaml byte for byte, which
// the gateway Deployment mounts where GATEWAY_CONFIG points. Run `npm run k8s:gateway-file` after editing the gateway
// file; tests/repository/deployment-files.ts fails while the two differ.
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { stringify } from 'yaml';
import { DEFAULT_GATEWAY_FILE } from '../gateway/gateway-file.js';

const CONFIGMAP_FILE = new URL('./k8s/gateway-file.yaml', import.meta.url);
/** The ConfigMap's key: the file name inside the mounted directory. */
export const GATEWAY_FILE_KEY = 'gateway.yaml';

export function gatewayFileConfigMap(): string {
  const header = '# Generated from gateway/gateway.yaml by `npm run k8s:gateway-file`; edit that file, not this one.\n';
  return (
    header +
    stringify(
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: 'tpi-gateway-file',
          labels: { 'app.kubernetes.io/part-of': 'third-party-integration-platform' },
        },
        data: { [GATEWAY_FILE_KEY]: readFileSync(DEFAULT_GATEWAY_FILE, 'utf8') },
      },
      { lineWidth: 0 },
    )
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(CONFIGMAP_FILE, gatewayFileConfigMap());
  console.log('infra/k8s/gateway-file.yaml: regenerated from gateway/gateway.yaml');
}
