// The suites CI runs once only (tests/support/suite-scopes.js) open no store: none of them calls a function that opens
// a database, connects to Redis or starts a system, or reads the variables that name the stores. Read from each
// suite's syntax tree (TypeScript's parser), so a suite that starts using a store fails here until it leaves the list.
import { describe, it, expect } from '@jest/globals';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import ts from 'typescript';
import { ignoredSuites, LONG_SUITES, STORE_FREE_SUITES } from '../support/suite-scopes.js';
import { HEAVIEST_FIRST } from '../support/suite-order.js';

describe('suite-scopes', () => {
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

  const TESTS = new URL('../', import.meta.url);

  /** A group suite's topics: the files of tests/<suite>/ (none for a suite that is one file). */
  const topicsOf = (suite: string): string[] => {
    const folder = new URL(`${suite}/`, TESTS);
    return existsSync(folder) ? readdirSync(folder).filter((file) => file.endsWith('.ts')) : [];
  };

  /** A suite's files under tests/: its entry and its topics. */
  const filesOf = (suite: string): string[] => [
    `${suite}.test.ts`,
    ...topicsOf(suite).map((topic) => `${suite}/${topic}`),
  ];

  /** The store openers a suite's files name and the store variables they read from process.env. */
  function storeUses(suite: string): string[] {
    const uses: string[] = [];
    for (const file of filesOf(suite)) uses.push(...storeUsesOf(file));
    return [...new Set(uses)];
  }

  /** The store openers one file under tests/ names and the store variables it reads from process.env. */
  function storeUsesOf(file: string): string[] {
    const tree = ts.createSourceFile(file, readFileSync(new URL(file, TESTS), 'utf8'), ts.ScriptTarget.Latest, true);
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
    it.each(STORE_FREE_SUITES.flatMap(filesOf))(
      'tests/%s opens no database and no Redis, and starts no system',
      (file) => {
        expect(storeUsesOf(file)).toEqual([]);
      },
    );

    it('would be caught opening one: a suite that starts a system names its opener', () => {
      expect(storeUses('fuzz-openapi')).toContain('startProbingSystem');
      expect(storeUses('gateway')).toEqual(expect.arrayContaining(['startTestSystem', 'process.env.REDIS_URL']));
    });

    it('are the ones TEST_SCOPE=stores leaves out, and every other suite stays in', () => {
      const patterns = ignoredSuites('stores').map((pattern) => new RegExp(pattern));
      const left = (name: string) => patterns.some((pattern) => pattern.test(`/repo/tests/${name}.test.ts`));
      expect(STORE_FREE_SUITES.filter((name) => !left(name))).toEqual([]);
      expect(['gateway', 'faults-stores', 'console'].filter(left)).toEqual([]);
    });
  });

  /** Every suite's name, from the files in tests/. */
  const ALL_SUITES = readdirSync(TESTS)
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

  describe('group suites', () => {
    const folders = readdirSync(TESTS, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && entry.name !== 'support')
      .map((entry) => entry.name);

    it('are each a folder of topics with the entry of the same name, which imports every topic in it', () => {
      const missing = folders.flatMap((suite) => {
        if (!ALL_SUITES.includes(suite)) return [`tests/${suite}.test.ts`];
        const entry = readFileSync(new URL(`${suite}.test.ts`, TESTS), 'utf8');
        return topicsOf(suite)
          .filter((topic) => !entry.includes(`import './${suite}/${topic.replace(/\.ts$/, '.js')}';`))
          .map((topic) => `tests/${suite}/${topic}`);
      });
      expect(missing).toEqual([]);
      expect(folders.length).toBeGreaterThan(0);
    });
  });

  describe('the order the workers take the suites in (tests/support/suite-order.js)', () => {
    it('names every suite once, and no other', () => {
      expect([...HEAVIEST_FIRST].sort()).toEqual([...ALL_SUITES].sort());
    });
  });
});
