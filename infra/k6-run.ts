// `npm run k6 -- <script> [k6 run flags]`: runs one of infra/k6's scripts with the k6 on the PATH, after checking that
// it is recent enough to run TypeScript as it is (k6 0.57 made that the default; older versions fail on the first
// type annotation with a message that does not say why). Exit codes: k6's own, or 2 when k6 is missing or too old.
import { spawn, spawnSync } from 'node:child_process';

const MIN_K6 = [0, 57, 0] as const;
const INSTALL = 'https://grafana.com/docs/k6/latest/set-up/install-k6/';

/** The version in `k6 version`'s first line ("k6 v1.2.3 (commit/…, go1.24, linux/amd64)"), or undefined. */
export function parseK6Version(output: string): [number, number, number] | undefined {
  const match = /\bv?(\d+)\.(\d+)\.(\d+)/.exec(output.split('\n')[0] ?? '');
  return match ? [Number(match[1]), Number(match[2]), Number(match[3])] : undefined;
}

const atLeast = (version: readonly number[], min: readonly number[]) => {
  for (let i = 0; i < min.length; i++) if (version[i] !== min[i]) return version[i]! > min[i]!;
  return true;
};

/** Why this machine's k6 cannot run the scripts, or undefined when it can. */
export function k6Problem(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const probe = spawnSync('k6', ['version'], { encoding: 'utf8', env });
  if (probe.error) return `k6 is not on the PATH: install k6 ${MIN_K6.join('.')} or later (${INSTALL})`;
  const version = parseK6Version(probe.stdout);
  if (!version) return `cannot read the version of the k6 on the PATH from "${probe.stdout.trim()}"`;
  if (!atLeast(version, MIN_K6))
    return (
      `k6 ${version.join('.')} is older than ${MIN_K6.join('.')}, ` +
      `the first that runs TypeScript scripts as they are: upgrade it (${INSTALL})`
    );
  return undefined;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  if (!args.length || args[0] === '--help') {
    console.log(
      'npm run k6 -- infra/k6/<script>.k6.ts [-e NAME=value …]   (infra/k6/README.md lists the scripts and settings)',
    );
    process.exit(args.length ? 0 : 2);
  }
  const problem = k6Problem();
  if (problem) {
    console.error(problem);
    process.exit(2);
  }
  spawn('k6', ['run', ...args], { stdio: 'inherit' }).on('exit', (code, signal) =>
    process.exit(code ?? (signal ? 1 : 0)),
  );
}
