// jest's test sequencer (plain JavaScript: jest loads it outside its TypeScript transform). The two workers take the
// suites in this order, heaviest first, so that they end together: a heavy suite started last would leave one core
// idle for its whole length. jest's own order is by how long each suite took last time, which a fresh clone does not
// know, and otherwise by file size, which a group suite's entry does not have (its topics are in its folder).
// tests/repository/suite-scopes.ts holds the list to the suites there are.
import Sequencer from '@jest/test-sequencer';
import { basename } from 'node:path';

/**
 * Every suite, heaviest first, by jest's time for it on 2026-11-28: `npm test`'s suites from two fresh-clone runs, the
 * long ones (TEST_SCOPE=long, which CI's pass on PostgreSQL and Redis runs among the others) from CI's run
 * (docs/performance.md, "The test suite's time").
 */
export const HEAVIEST_FIRST = [
  'console', // 151 s
  'fresh-start', // 126-152
  'sign-in', // 133
  'api', // 125
  'faults-stores', // 111-116
  'gateway', // 105
  'tracing', // 103
  'admin', // 83
  'faults-services', // 72-87
  'decisions', // 63
  'fuzz-openapi', // 47
  'tokens', // 37
  'graceful-shutdown', // 29
  'database', // 28
  'units', // 15
  'repository', // 14
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
