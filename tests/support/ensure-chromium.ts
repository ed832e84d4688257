// `pretest` and `predemo-token`: the browser suites and the demo token drive Debian's Chromium. Finds it, installs
// Debian's package where this process may (root with apt-get), and otherwise stops with one line naming the command
// to run, so a missing browser is never dozens of identical stack traces. See docs/decisions.md.
import { accessSync, constants } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { CHROMIUM_PATH } from './browser.js';

const executable = (path: string) => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

function stop(line: string): never {
  console.error(line);
  process.exit(1);
}

/**
 * Runs one command with its output on stderr (stdout may be a token that a caller captures); true when it succeeded.
 */
const run = (command: string, args: string[]) =>
  spawnSync(command, args, { stdio: ['ignore', 2, 2], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } })
    .status === 0;

if (!executable(CHROMIUM_PATH)) {
  if (process.env.CHROMIUM_PATH)
    stop(
      `CHROMIUM_PATH=${CHROMIUM_PATH} is not an executable file: ` +
        `point it at a Chromium binary, or unset it to use Debian's /usr/bin/chromium.`,
    );
  const canInstall = process.getuid?.() === 0 && spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0;
  if (!canInstall)
    stop(
      `The browser suites need Chromium at ${CHROMIUM_PATH}: ` +
        `run \`sudo apt-get install -y chromium\` (or set CHROMIUM_PATH to a Chromium binary), then run this again.`,
    );
  console.error(
    `Chromium not found at ${CHROMIUM_PATH}: installing Debian's chromium package (apt-get install chromium) ...`,
  );
  if (
    !run('apt-get', ['update', '-qq']) ||
    !run('apt-get', ['install', '-y', '-qq', 'chromium']) ||
    !executable(CHROMIUM_PATH)
  )
    stop(
      `Installing Chromium failed: run \`apt-get update && apt-get install -y chromium\` as root, then run this again.`,
    );
  console.error(`Chromium installed at ${CHROMIUM_PATH}.`);
}
