// `npm run bench` runs bench/bench.ts on the newest Node that package.json's `engines` names (the runtime users run),
// whatever Node started npm: figures taken on another runtime do not describe the product (docs/performance.md).
// BENCH_NODE picks another: a major version (`20`, `22`) or the path of a node binary. A major other than this
// process's comes from the npm registry's `node` package through npx, as CI's Node 24 pass gets it. The first line
// printed names the Node the run is on; every process of the run (services, baselines, load generator) inherits it.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const [script, ...args] = process.argv.slice(2);
if (!script) throw new Error('usage: engines-node.ts <script> [args]');

const engines: string = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).engines.node;
const newestMajor = Math.max(...[...engines.matchAll(/(\d+)\.\d+/g)].map((m) => Number(m[1])));
const chosen = process.env.BENCH_NODE || String(newestMajor);
const node = /^\d+$/.test(chosen) ? nodeOfMajor(Number(chosen)) : chosen;
const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
const why = process.env.BENCH_NODE ? 'BENCH_NODE' : `the newest in engines "${engines}"`;
console.log(`bench: Node ${version} (${why}; ${node})`);

const run = spawnSync(node, ['--import', 'tsx', script, ...args], { stdio: 'inherit' });
process.exit(run.status ?? 1);

/** This process's node when it is of `major`, else the npm registry's `node@<major>` through npx (cached after once). */
function nodeOfMajor(major: number): string {
  if (Number(process.versions.node.split('.')[0]) === major) return process.execPath;
  const found = execFileSync('npx', ['--yes', '-p', `node@${major}`, '-c', 'command -v node'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return found.trim().split('\n').at(-1)!;
}
