// Where a service's CPU went, from the V8 profile it wrote under BENCH_CPU_PROF (`--cpu-prof`): self time by part
// (the product's own files, each package, Node's internals by module, the garbage collector), by the nearest product
// file on the stack, and the heaviest frames, each as a share of the sampled busy time, so profiles of runs at
// different rates compare. A window keeps only the samples of the busiest span of that many seconds in a reference
// profile (the file itself by default): in a `BENCH_ONLY=R1` run the gateway's busiest span is the R1 phase, and the
// other processes are cut to the same span (the profiles' clocks are the machine's monotonic clock).
//   BENCH_CPU_PROF=/tmp/p BENCH_ONLY=R1 BENCH_SHAPES=deployed BENCH_DURATION_S=15 npm run bench
//   npx tsx bench/cpu-profile-summary.ts <file.cpuprofile> [window seconds, 0 = all] [frames=25] [reference.cpuprofile]
// A sample's time is wall time on the sampled thread: on a loaded machine a process preempted inside a system call (a
// socket write that wakes the reader) is charged for the wait, so read the shares of a quiet run.
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  startTime: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The part a frame belongs to: a package, a Node module, one of the product's folders, or V8's own entry. */
export function partOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const internal = /^node:(?:internal\/)?([^/]+)/.exec(url);
  if (internal) return `node:${internal[1]}`;
  const own = /\/(backend|common|gateway|issuer|policies|wire)\/(.+)$/.exec(url);
  return own ? `${own[1]}/${own[2]}` : url;
}

const OWN = /^(backend|common|gateway|issuer|policies|wire)\//;
const isIdle = (node: ProfileNode) => node.callFrame.functionName === '(idle)';

/** Each sample's time on the machine's monotonic clock (µs), and whether the process was busy in it. */
function timeline(profile: CpuProfile): { at: number[]; busy: boolean[] } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const at: number[] = [];
  profile.timeDeltas.reduce((t, dt, i) => (at[i] = t + dt), profile.startTime);
  return { at, busy: profile.samples.map((id) => !isIdle(byId.get(id)!)) };
}

/** The span of `windowS` seconds holding the most busy samples (two pointers over the samples). */
export function busiestSpan(profile: CpuProfile, windowS: number): { from: number; to: number } {
  const { at, busy } = timeline(profile);
  const span = windowS * 1e6;
  let [best, from, inWindow] = [-1, 0, 0];
  for (let end = 0, start = 0; end < at.length; end++) {
    if (busy[end]) inWindow += profile.timeDeltas[end] ?? 0;
    for (; at[end]! - at[start]! > span; start++) if (busy[start]) inWindow -= profile.timeDeltas[start] ?? 0;
    if (inWindow > best) [best, from] = [inWindow, at[start]!];
  }
  return { from, to: from + span };
}

export function summarize(
  profile: CpuProfile,
  span: { from: number; to: number } = { from: -Infinity, to: Infinity },
): { busyUs: number; parts: [string, number][]; frames: [string, number][]; ownCallers: [string, number][] } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);
  /** The nearest of the product's files on the stack, self included: whose work a library frame was doing. */
  const ownCaller = (id: number | undefined): string | undefined => {
    for (; id !== undefined; id = parentOf.get(id)) {
      const { url, functionName } = byId.get(id)!.callFrame;
      const part = partOf(url, functionName);
      if (OWN.test(part)) return part;
    }
    return undefined;
  };
  const { at, busy } = timeline(profile);
  const parts = new Map<string, number>();
  const frames = new Map<string, number>();
  const ownCallers = new Map<string, number>();
  const add = (m: Map<string, number>, key: string, dt: number) => m.set(key, (m.get(key) ?? 0) + dt);
  let busyUs = 0;
  profile.samples.forEach((id, i) => {
    if (!busy[i] || at[i]! < span.from || at[i]! > span.to) return;
    const dt = profile.timeDeltas[i] ?? 0;
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const part = partOf(url, functionName);
    busyUs += dt;
    add(parts, part, dt);
    add(frames, `${functionName || '(anonymous)'} ${part}:${lineNumber + 1}`, dt);
    add(ownCallers, ownCaller(id) ?? `(no product frame) ${part}`, dt);
  });
  const heaviest = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);
  return { busyUs, parts: heaviest(parts), frames: heaviest(frames), ownCallers: heaviest(ownCallers) };
}

function heaviestFolder(parts: [string, number][]): string {
  const folders = new Map<string, number>();
  for (const [part, us] of parts) {
    const folder = part.split('/')[0]!;
    folders.set(folder, (folders.get(folder) ?? 0) + us);
  }
  return [...folders].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 'no product files';
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file, windowS = '0', top = '25', reference = file] = process.argv.slice(2);
  if (!file) throw new Error('usage: cpu-profile-summary.ts <file.cpuprofile> [window s] [frames] [reference]');
  const read = (f: string) => JSON.parse(readFileSync(f, 'utf8')) as CpuProfile;
  const span = Number(windowS) > 0 ? busiestSpan(read(reference!), Number(windowS)) : undefined;
  const { busyUs, parts, frames, ownCallers } = summarize(read(file), span);
  const pct = (us: number) => `${((100 * us) / busyUs).toFixed(1).padStart(5)} %`;
  const shown = (rows: [string, number][]) => rows.filter(([, us]) => us / busyUs >= 0.005);
  // Which service wrote it: the product folder (common/ and wire/ aside) whose files hold the most samples.
  const service = heaviestFolder(parts.filter(([part]) => /^(backend|gateway|issuer|policies)\//.test(part)));
  console.log(`${file} (${service}): busy ${(busyUs / 1e6).toFixed(2)} s${span ? ` in the busiest ${windowS} s` : ''}`);
  console.log('\nby part');
  for (const [part, us] of shown(parts)) console.log(`${pct(us)}  ${part}`);
  console.log('\nby the nearest product file on the stack (its library calls included)');
  for (const [caller, us] of shown(ownCallers)) console.log(`${pct(us)}  ${caller}`);
  console.log('\nheaviest frames (self)');
  for (const [frame, us] of frames.slice(0, Number(top))) console.log(`${pct(us)}  ${frame}`);
}
