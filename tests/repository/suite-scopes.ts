// The suites CI runs once only (tests/support/suite-scopes.js) open no store: none of them calls a function that opens
// a database, connects to Redis or starts a system, or reads the variables that name the stores. Read from each
// suite's syntax tree (TypeScript's parser), so a suite that starts using a store fails here until it leaves the list.
import { describe, it, expect } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import ts from 'typescript';
import { ignoredSuites, LONG_SUITES, STORE_FREE_SUITES } from './support/suite-scopes.js';

/** Every function that opens a store or starts something that does (common/db, rate-limit-store, the test support). */
const STORE_OPENERS = new Set([
  'openDatabase',
  'connectRedis',
  'startSystem',
  'startTestSystem',
  'startProbingSystem',
  'startStack',
  'startProcesses',
  'freshDatabase',
  'scratchDatabase',
  'privatePostgres',
  'privateRedis',
  'startRedisCluster',
]);
const STORE_VARIABLES = new Set(['DATABASE_URL', 'REDIS_URL']);

/** The store openers a suite names and the store variables it reads from process.env. */
function storeUses(suite: string): string[] {
  const file = new URL(`./${suite}.test.ts`, import.meta.url);
  const tree = ts.createSourceFile(file.pathname, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const uses: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node) && STORE_OPENERS.has(node.text)) uses.push(node.text);
    if (
      ts.isPropertyAccessExpression(node) &&
      STORE_VARIABLES.has(node.name.text) &&
      node.expression.getText(tree) === 'process.env'
    )
      uses.push(`process.env.${node.name.text}`);
    ts.forEachChild(node, visit);
  };
  visit(tree);
  return [...new Set(uses)];
}

describe('suites run once in CI (TEST_SCOPE=stores leaves them out)', () => {
  it.each(STORE_FREE_SUITES)('%s opens no database and no Redis, and starts no system', (suite) => {
    expect(storeUses(suite)).toEqual([]);
  });

  it('would be caught opening one: a suite that starts a system names its opener', () => {
    expect(storeUses('gateway')).toContain('startTestSystem');
    expect(storeUses('rate-limit')).toEqual(expect.arrayContaining(['process.env.REDIS_URL']));
  });

  it('are the ones TEST_SCOPE=stores leaves out, and every other suite stays in', () => {
    const patterns = ignoredSuites('stores').map((pattern) => new RegExp(pattern));
    const left = (name: string) => patterns.some((pattern) => pattern.test(`/repo/tests/${name}.test.ts`));
    expect(STORE_FREE_SUITES.filter((name) => !left(name))).toEqual([]);
    expect(['gateway', 'faults-stores', 'admin-console'].filter(left)).toEqual([]);
  });
});

/** Every suite's name, from the files in tests/. */
const ALL_SUITES = readdirSync(new URL('.', import.meta.url))
  .filter((file) => file.endsWith('.test.ts'))
  .map((file) => file.replace(/\.test\.ts$/, ''));

/** The suites a scope runs: those no ignore pattern of the scope matches. */
const runIn = (scope: string | undefined) => {
  const patterns = ignoredSuites(scope).map((pattern) => new RegExp(pattern));
  return ALL_SUITES.filter((name) => !patterns.some((pattern) => pattern.test(`/repo/tests/${name}.test.ts`)));
};

describe('the long suites (TEST_SCOPE=long, run by CI beside npm test)', () => {
  it('are suites that exist', () => {
    expect(LONG_SUITES.filter((name) => !ALL_SUITES.includes(name))).toEqual([]);
  });

  it('are left out of npm test, and every other suite stays in it', () => {
    expect(runIn(undefined).sort()).toEqual(ALL_SUITES.filter((name) => !LONG_SUITES.includes(name)).sort());
  });

  it('are all TEST_SCOPE=long runs; the stores pass and TEST_SCOPE=all run them too, so none is left out of CI', () => {
    expect(runIn('long').sort()).toEqual([...LONG_SUITES].sort());
    expect(LONG_SUITES.filter((name) => !runIn('stores').includes(name))).toEqual([]);
    expect(runIn('all').sort()).toEqual([...ALL_SUITES].sort());
  });
});
