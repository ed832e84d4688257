// `npm run bench`, parent side of the load generator (loader.ts): one child process, one measurement at a time.
import type { Child } from '../tests/support/processes.js';
import { readyMessage, spawnChild } from './shapes.js';
import type { LoadRequest, LoadResult } from './loader.js';

export interface Loader {
  child: Child;
  run(request: LoadRequest): Promise<LoadResult>;
}

export async function startLoader(): Promise<Loader> {
  const child = await spawnChild('loader', 'bench/loader.ts', {});
  await readyMessage(child);
  return {
    child,
    run: (request) =>
      new Promise((resolve, reject) => {
        child.process.once('message', (m: { result?: LoadResult; error?: string }) =>
          m.result ? resolve(m.result) : reject(new Error(m.error)),
        );
        child.process.send(request);
      }),
  };
}
