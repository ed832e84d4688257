// `npm test` and `npm run coverage`. The type check and the format check run first, side by side, and jest after them:
// on a loaded machine a check beside jest's two workers cost up to twice its CPU, and on a quiet one the run takes no
// longer for waiting (docs/performance.md, "The test suite's time"). jest runs whatever the checks found. Each part's
// time is printed; the run fails when any part fails.
//   npm test [-- <jest arguments>]   type check, format check and every jest suite but the long ones
//   TEST_SCOPE=long npm test         only the long suites (process starts, faults, shutdown, tracing), no checks
//   TEST_SCOPE=stores npm test       only the suites whose outcome can depend on the stores, no checks (CI's second
//                                    pass, on PostgreSQL and Redis: the checks and the other suites cannot change there)
//   TEST_SCOPE=all npm test          the checks and every suite, the long ones too
//   npm run coverage                 npm test's suites (or TEST_SCOPE's) with V8 coverage, then line and branch
//                                    coverage per folder
// tests/support/suite-scopes.js says which suite is in which scope.
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { printCoverage } from './coverage-report.js';

const coverage = process.argv.includes('--coverage');
const jestArgs = process.argv.slice(2);
const scope = process.env.TEST_SCOPE;
/** The type and format checks run with `npm test` and TEST_SCOPE=all, not with a partial scope or coverage. */
const withChecks = (!scope || scope === 'all') && !coverage;

interface Finished {
  ok: boolean;
  output: string;
}

/** Runs one command; its output goes straight to ours when `shown`, otherwise it is kept for the report. */
function run(command: string, args: string[], shown: boolean): Promise<Finished> {
  return new Promise((done) => {
    const child = spawn(command, args, { stdio: ['ignore', shown ? 'inherit' : 'pipe', shown ? 'inherit' : 'pipe'] });
    let output = '';
    child.stdout?.on('data', (chunk) => (output += chunk));
    child.stderr?.on('data', (chunk) => (output += chunk));
    child.on('error', (error) => done({ ok: false, output: `${command}: ${error.message}\n` }));
    child.on('close', (code) => done({ ok: code === 0, output }));
  });
}

/** Runs the commands of one part one after another, stopping at the first failure, and reports it with its time. */
async function part(name: string, commands: [string, string[]][], shown = false): Promise<boolean> {
  const began = performance.now();
  let finished: Finished = { ok: true, output: '' };
  for (const [command, args] of commands) {
    finished = await run(command, args, shown);
    if (!finished.ok) break;
  }
  const seconds = ((performance.now() - began) / 1000).toFixed(1);
  if (!finished.ok) process.stdout.write(finished.output);
  console.log(`test: ${name} ${finished.ok ? 'passed' : 'FAILED'} in ${seconds} s`);
  return finished.ok;
}

const bin = (name: string) => `node_modules/.bin/${name}`;
const CACHE = 'node_modules/.cache';
const checks = !withChecks
  ? []
  : [
      // Both keep what they learnt in node_modules/.cache, so a second run checks only what changed.
      part('type check', [
        [bin('tsc'), ['--noEmit', '--incremental', '--tsBuildInfoFile', `${CACHE}/tsc/project.tsbuildinfo`]],
        [bin('tsc'), ['-p', 'infra/k6', '--incremental', '--tsBuildInfoFile', `${CACHE}/tsc/k6.tsbuildinfo`]],
      ]),
      part('format check (prettier; `npm run format` rewrites)', [
        [bin('prettier'), ['--check', '--cache', '--log-level', 'warn', '**/*.{ts,js,mjs}']],
      ]),
    ];
const checked = await Promise.all(checks);
const jest = await part(
  scope ? `jest (TEST_SCOPE=${scope})` : 'jest',
  [[process.execPath, ['--experimental-vm-modules', 'node_modules/jest/bin/jest.js', ...jestArgs]]],
  true,
);
if (coverage && jest) printCoverage('coverage/coverage-summary.json');
process.exit(jest && checked.every(Boolean) ? 0 : 1);
