// `npm run bench`, parent side of the load generator (bench-loader.ts): one child process, one measurement at a time.
import type { Child } from './processes.js';
import { readyMessage, spawnChild } from './bench-processes.js';
import type { LoadRequest, LoadResult } from './bench-loader.js';

export interface Loader {
  child: Child;
  run(request: LoadRequest): Promise<LoadResult>;
}

export async function startLoader(): Promise<Loader> {
  const child = await spawnChild('loader', 'tests/support/bench-loader.ts', {});
  await readyMessage(child);
  return {
    child,
    run: (request) =>
      new Promise((resolve, reject) => {
        child.process.once('message', (m: { result?: LoadResult; error?: string }) => (m.result ? resolve(m.result) : reject(new Error(m.error))));
        child.process.send(request);
      }),
  };
}
