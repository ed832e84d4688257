// What README.md and the docs promise is what the code does: each line of the `sh` blocks of README.md and of the
// docs its commands moved into (operations, development) must appear, as written, in .ci/run (no command can rot
// unnoticed); docs/operations.md's configuration and plugin references are the ones generated from the code; every
// relative link of README.md and docs/*.md reaches a file, and a heading where it names one, as does every title the
// code and the docs cite as `decisions.md "Title"`. README also stands alone: nothing it names lies outside the
// repository.
import { describe, it, expect } from '@jest/globals';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { withGeneratedTables } from '../../infra/config-reference.js';
import { PLUGINS } from '../../gateway/plugins/index.js';
import type { z } from 'zod';

describe('readme', () => {
  const root = new URL('../../', import.meta.url);
  const read = (path: string) => readFileSync(new URL(path, root), 'utf8');
  const readme = read('README.md');
  const ci = read('.ci/run');

  const commandsOf = (text: string) =>
    [...text.matchAll(/^```sh\n([\s\S]*?)^```/gm)]
      .flatMap((block) => block[1]!.split('\n'))
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));

  describe('README.md commands', () => {
    it('are found (the two commands first)', () => {
      expect(commandsOf(readme).slice(0, 2)).toEqual(['npm install && npm start', 'npm test']);
    });

    it.each(['README.md', 'docs/operations.md', 'docs/development.md'].flatMap((file) => commandsOf(read(file))))(
      '`%s` is run by .ci/run as written',
      (command) => {
        expect(ci).toContain(command);
      },
    );
  });

  describe('docs/operations.md generated references', () => {
    it(
      'are the tables generated from common/config.ts SETTINGS and the ' +
        'gateway plugin schemas (regenerate with `npm run docs:config`)',
      () => {
        const operations = read('docs/operations.md');
        expect(operations).toBe(withGeneratedTables(operations));
      },
    );

    it.each([...PLUGINS.keys()])('describe every setting of the plugin %s', (name) => {
      const shape = (PLUGINS.get(name)!.settings as z.ZodObject).shape;
      expect(
        Object.entries(shape)
          .filter(([, setting]) => !setting.description)
          .map(([setting]) => setting),
      ).toEqual([]);
    });
  });

  describe('README.md stands alone', () => {
    it('names no path that leaves the repository (a clone alone has everything it points to)', () => {
      expect(readme.match(/(^|[\s`(['"])\.\.\/\S*/gm) ?? []).toEqual([]);
    });
  });

  /** GitHub's anchor of a heading: lower case, markup and punctuation other than '-' and '_' dropped, spaces to '-'. */
  function slug(heading: string): string {
    return heading
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/[`*]/g, '')
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/ /g, '-');
  }

  /** Every anchor a markdown file offers: its ATX headings' slugs (repeats get -1, -2, as GitHub numbers them). */
  function anchorsOf(markdown: string): Set<string> {
    const seen = new Map<string, number>();
    const anchors = new Set<string>();
    const prose = markdown.replace(/^(```|~~~)[\s\S]*?^\1/gm, '');
    for (const [, heading] of prose.matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
      const base = slug(heading!);
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      anchors.add(count === 0 ? base : `${base}-${count}`);
    }
    return anchors;
  }

  /** The relative targets of a markdown file's inline links and images, outside code blocks and code spans. */
  function relativeLinksOf(markdown: string): string[] {
    const prose = markdown.replace(/^(```|~~~)[\s\S]*?^\1/gm, '').replace(/`[^`\n]*`/g, '');
    return [...prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)]
      .map((m) => m[1]!)
      .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
  }

  const documents = [
    'README.md',
    ...readdirSync(new URL('docs/', root))
      .filter((name) => name.endsWith('.md'))
      .map((name) => `docs/${name}`),
  ];

  /** Each link's problem, or nothing: the file it names must exist in the repository, the heading it names in that file. */
  function brokenLinks(file: string, markdown: string): string[] {
    const base = new URL(file, root);
    return relativeLinksOf(markdown).flatMap((target) => {
      const [path, fragment] = target.split('#') as [string, string | undefined];
      const url = path === '' ? base : new URL(decodeURI(path), base);
      if (!url.href.startsWith(root.href) || !existsSync(url)) return [`${target}: no such file`];
      if (fragment === undefined || !url.pathname.endsWith('.md') || statSync(url).isDirectory()) return [];
      const anchors = anchorsOf(readFileSync(url, 'utf8'));
      return anchors.has(decodeURIComponent(fragment).toLowerCase()) ? [] : [`${target}: no heading #${fragment}`];
    });
  }

  describe('every relative link of README.md and docs/*.md', () => {
    it('finds links to check', () => {
      expect(documents.flatMap((file) => relativeLinksOf(read(file))).length).toBeGreaterThan(10);
    });

    it.each(documents)('in %s reaches a file, and the heading it names', (file) => {
      expect(brokenLinks(file, read(file))).toEqual([]);
    });

    it('catches a link to a missing file and to a missing heading', () => {
      expect(
        brokenLinks(
          'docs/x.md',
          '[a](operations.md#capacity-model) [b](nowhere.md) [c](performance.md#no-such-heading)',
        ),
      ).toEqual(['nowhere.md: no such file', 'performance.md#no-such-heading: no heading #no-such-heading']);
    });

    it('slugs headings as GitHub does', () => {
      expect(slug("The test suite's time")).toBe('the-test-suites-time');
      expect(slug('Traces (OpenTelemetry)')).toBe('traces-opentelemetry');
      expect(slug('1. Getting a token')).toBe('1-getting-a-token');
      expect(slug('`TEST_SCOPE` and the_long suites')).toBe('test_scope-and-the_long-suites');
    });
  });

  /** The files that may cite docs/decisions.md: the repository's sources and documents, not what .gitignore lists. */
  function citingFiles(dir = '', skip = /^(\.|node_modules$|dist$|coverage$|test-artifacts$)/): string[] {
    return readdirSync(new URL(dir || './', root), { withFileTypes: true }).flatMap((entry) => {
      if (skip.test(entry.name)) return [];
      const path = `${dir}${entry.name}`;
      if (entry.isDirectory()) return citingFiles(`${path}/`, skip);
      return /\.(ts|js|md|ya?ml)$/.test(entry.name) ? [path] : [];
    });
  }

  /**
   * The titles a file cites as `decisions.md "Title"` or `decisions.md, "Title"`, also across a comment's line break
   * (the next line's `//`, `*` or `#` is read as a space).
   */
  function decisionCitationsOf(text: string): string[] {
    const joined = text.replace(/\n[ \t]*(?:\/\/|\*|#)?[ \t]*/g, ' ');
    return [...joined.matchAll(/decisions\.md,? "([^"]+)"/g)].map((m) => m[1]!);
  }

  /** A cited title names a heading when it is the heading, or the heading's start followed by ':' or ','. */
  function namesHeading(title: string, headings: string[]): boolean {
    return headings.some((h) => h === title || (h.startsWith(title) && ':,'.includes(h[title.length]!)));
  }

  describe('every docs/decisions.md "Title" cited in the code and the docs', () => {
    const headings = [...read('docs/decisions.md').matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)].map((m) => m[1]!);
    const citations = citingFiles()
      .filter((file) => file !== 'tests/repository/readme.ts') // its examples are not citations
      .flatMap((file) => decisionCitationsOf(read(file)).map((title) => ({ file, title })));

    it('finds citations to check', () => {
      expect(citations.length).toBeGreaterThan(10);
    });

    it('names a heading of docs/decisions.md', () => {
      expect(citations.filter(({ title }) => !namesHeading(title, headings))).toEqual([]);
    });

    it('reads a citation across a comment line break, and tells a missing heading', () => {
      expect(
        decisionCitationsOf('// see docs/decisions.md\n// "Redis outage"). And decisions.md, "Row locks".'),
      ).toEqual(['Redis outage', 'Row locks']);
      expect(namesHeading('Redis outage', ['Redis outage: bounded degradation'])).toBe(true);
      expect(namesHeading('Redis', ['Redis outage: bounded degradation'])).toBe(false);
      expect(namesHeading('Redis outages', ['Redis outage: bounded degradation'])).toBe(false);
    });
  });
});
