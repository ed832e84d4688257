// A jest reporter (plain JavaScript: jest loads reporters outside its TypeScript transform): after every run, one line
// naming the five slowest suites by jest's own wall time, and the sum of all suites' times, so a contributor sees where
// the run's time went and .ci/run can list them in its summary (it looks for the line's first words).
import { suiteName } from './suite-order.js';

const SHOWN = 5;

export default class SlowestSuitesReporter {
  onRunComplete(_contexts, results) {
    const times = results.testResults
      .map((suite) => ({
        name: suiteName(suite.testFilePath),
        s: (suite.perfStats.end - suite.perfStats.start) / 1000,
      }))
      .filter((suite) => Number.isFinite(suite.s) && suite.s > 0)
      .sort((a, b) => b.s - a.s);
    if (times.length === 0) return;
    const total = times.reduce((sum, suite) => sum + suite.s, 0);
    const slowest = times.slice(0, SHOWN).map((suite) => `${suite.name} ${suite.s.toFixed(1)} s`);
    console.log(`Slowest suites: ${slowest.join(', ')} (${times.length} suites, ${total.toFixed(0)} s in all)`);
  }
}
