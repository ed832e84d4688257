// What README.md promises is what the code does: each line of README's `sh` blocks must appear, as written, in
// .ci/run (no command can rot unnoticed), and its configuration reference is the one generated from the code.
// It also stands alone: nothing it names lies outside the repository.
import { describe, it, expect } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { withGeneratedTables } from '../infra/config-reference.js';
import { PLUGINS } from '../gateway/plugins/index.js';
import type { z } from 'zod';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const ci = readFileSync(new URL('../.ci/run', import.meta.url), 'utf8');

const commands = [...readme.matchAll(/^```sh\n([\s\S]*?)^```/gm)]
  .flatMap((block) => block[1]!.split('\n'))
  .map((line) => line.trim())
  .filter((line) => line !== '' && !line.startsWith('#'));

describe('README.md commands', () => {
  it('are found (the two commands first)', () => {
    expect(commands.slice(0, 2)).toEqual(['npm install && npm start', 'npm test']);
  });

  it.each(commands)('`%s` is run by .ci/run as written', (command) => {
    expect(ci).toContain(command);
  });
});

describe('README.md generated references', () => {
  it(
    'are the tables generated from common/config.ts SETTINGS and the ' +
      'gateway plugin schemas (regenerate with `npm run docs:config`)',
    () => {
      expect(readme).toBe(withGeneratedTables(readme));
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
  const root = new URL('../', import.meta.url);
  const links = [...readme.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((target) => !/^(https?:|mailto:|#)/.test(target));

  it('names no path that leaves the repository (a clone alone has everything it points to)', () => {
    expect(readme.match(/(^|[\s`(['"])\.\.\/\S*/gm) ?? []).toEqual([]);
  });

  it.each(links)('links to %s, a file of this repository', (target) => {
    const file = new URL(target.split('#')[0]!, root);
    expect(file.href.startsWith(root.href) && existsSync(file)).toBe(true);
  });
});
