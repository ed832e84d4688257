// jest's test sequencer (plain JavaScript: jest loads it outside its TypeScript transform). The two workers take the
// suites in this order, heaviest first, so that they end together: a heavy suite started last would leave one core
// idle for its whole length. jest's own order is by how long each suite took last time, which a fresh clone does not
// know, and otherwise by file size, which a group suite's entry does not have (its topics are in its folder).
// tests/repository/suite-scopes.ts holds the list to the suites there are.
import Sequencer from '@jest/test-sequencer';
import { basename } from 'node:path';

/** Every suite, heaviest first by its CPU in `npm test` (docs/performance.md, "The test suite's time"). */
export const HEAVIEST_FIRST = [
  'sign-in',
  'api',
  'admin',
  'decisions',
  'gateway',
  'console',
  'fuzz-openapi',
  'tokens',
  'database',
  'repository',
  'units',
  // The long suites (TEST_SCOPE=long, and CI's pass on PostgreSQL and Redis).
  'faults-stores',
  'tracing',
  'fresh-start',
  'graceful-shutdown',
  'faults-services',
];

/** A suite's name: tests/<name>.test.ts. */
export const suiteName = (path) => basename(path).replace(/\.test\.ts$/, '');

export default class SuiteOrder extends Sequencer {
  sort(tests) {
    const rank = (test) => {
      const at = HEAVIEST_FIRST.indexOf(suiteName(test.path));
      return at < 0 ? HEAVIEST_FIRST.length : at;
    };
    return [...tests].sort((a, b) => rank(a) - rank(b));
  }
}
