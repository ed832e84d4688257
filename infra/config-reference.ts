// README's configuration reference, generated from the validated settings (common/config.ts SETTINGS): each
// variable's name, default and description. `npm run docs:config` rewrites the table between the markers in
// README.md; tests/readme.test.ts fails when README and the code disagree.
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { SETTINGS, loadConfig } from '../common/config.js';

const BEGIN = '<!-- configuration:begin (generated from common/config.ts by `npm run docs:config`; do not edit) -->';
const END = '<!-- configuration:end -->';
const README = new URL('../README.md', import.meta.url);

/** The table: one row per setting, in SETTINGS order; "unset" where the code has no default. */
function configurationTable(): string {
  const defaults: Record<string, unknown> = loadConfig({});
  const cell = (text: string) => text.replace(/\|/g, '\\|');
  const rows = Object.entries(SETTINGS).map(([name, { doc }]) =>
    `| \`${name}\` | ${defaults[name] === undefined ? 'unset' : `\`${String(defaults[name])}\``} | ${cell(doc)} |`);
  return ['| variable | default | meaning |', '|---|---|---|', ...rows].join('\n');
}

/** `readme` with the text between the markers replaced by the generated table. */
export function withConfigurationTable(readme: string): string {
  const start = readme.indexOf(BEGIN);
  const end = readme.indexOf(END);
  if (start < 0 || end < start) throw new Error(`README.md must hold the markers\n${BEGIN}\n${END}`);
  return `${readme.slice(0, start + BEGIN.length)}\n${configurationTable()}\n${readme.slice(end)}`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(README, withConfigurationTable(readFileSync(README, 'utf8')));
  console.log('README.md: configuration reference regenerated from common/config.ts');
}
