// The shipped gateway file as suites change it: text edits that must apply (a renamed line fails the suite instead of
// quietly testing the unedited file), written into a scratch directory the suite removes when it ends.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_GATEWAY_FILE } from '../../gateway/gateway-file.js';

export const SHIPPED_GATEWAY_FILE = readFileSync(DEFAULT_GATEWAY_FILE, 'utf8');

/** `text` (the shipped file unless given) with `from` replaced by `to`; throws when `from` is not in it. */
export function editedGatewayFile(from: string, to: string, text = SHIPPED_GATEWAY_FILE): string {
  if (!text.includes(from)) throw new Error(`the gateway file has no ${JSON.stringify(from)}`);
  return text.replace(from, to);
}

export interface GatewayFileDirectory {
  /** Writes `text` as a new file of the directory; its path. */
  write(text: string): string;
  /** Deletes the directory and every file written to it. */
  remove(): void;
}

export function gatewayFileDirectory(name: string): GatewayFileDirectory {
  const dir = mkdtempSync(join(tmpdir(), `${name}-`));
  let count = 0;
  return {
    write(text) {
      const file = join(dir, `gateway-${++count}.yaml`);
      writeFileSync(file, text);
      return file;
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
