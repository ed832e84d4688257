// Installs one of Debian's packages for a tool the tests need, where this process may (root with apt-get), and
// otherwise stops with one line naming the command to run, so a missing tool is never dozens of identical failures.
// Used by the `pretest` checks (ensure-chromium.ts, ensure-promtool.ts). See docs/decisions.md.
import { accessSync, constants } from 'node:fs';
import { spawnSync } from 'node:child_process';

export const executable = (path: string) => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

export function stop(line: string): never {
  console.error(line);
  process.exit(1);
}

/**
 * Runs one command with its output on stderr (stdout may be a token that a caller captures); true when it succeeded.
 */
const run = (command: string, args: string[]) =>
  spawnSync(command, args, { stdio: ['ignore', 2, 2], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } })
    .status === 0;

/** Makes `path` exist by installing Debian's `pkg`; `needed` says who needs it, in the message when that cannot be. */
export function installDebianPackage(pkg: string, path: string, needed: string): void {
  const canInstall = process.getuid?.() === 0 && spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0;
  if (!canInstall) stop(`${needed} at ${path}: run \`sudo apt-get install -y ${pkg}\`, then run this again.`);
  console.error(`${path} not found: installing Debian's ${pkg} package (apt-get install ${pkg}) ...`);
  if (!run('apt-get', ['update', '-qq']) || !run('apt-get', ['install', '-y', '-qq', pkg]) || !executable(path))
    stop(`Installing ${pkg} failed: run \`apt-get update && apt-get install -y ${pkg}\` as root, then run this again.`);
  console.error(`${pkg} installed: ${path}.`);
}
