// docs/operations.md's two generated references: the configuration (common/config.ts SETTINGS: each variable's name, default and
// description) and the gateway plugins' settings (each plugin's schema, gateway/plugins/<name>/schema.ts: setting,
// default, description). `npm run docs:config` rewrites the tables between their markers in
// docs/operations.md; tests/repository/readme.ts fails when the document and the code disagree.
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { z } from 'zod';
import { SETTINGS, loadConfig } from '../common/config.js';
import { PLUGINS } from '../gateway/plugins/index.js';

const OPERATIONS = new URL('../docs/operations.md', import.meta.url);
const cell = (text: string) => text.replace(/\|/g, '\\|');

/** The table: one row per setting, in SETTINGS order; "unset" where the code has no default. */
function configurationTable(): string {
  const defaults: Record<string, unknown> = loadConfig({});
  const rows = Object.entries(SETTINGS).map(
    ([name, { doc }]) =>
      `| \`${name}\` | ${defaults[name] === undefined ? 'unset' : `\`${String(defaults[name])}\``} | ${cell(doc)} |`,
  );
  return ['| variable | default | meaning |', '|---|---|---|', ...rows].join('\n');
}

/** One row per plugin setting, plugins in the registry's order: the default a file without `config:` gets. */
function pluginTable(): string {
  const rows = [...PLUGINS.values()].flatMap((plugin) => {
    const schema = plugin.settings as z.ZodObject;
    const defaults = schema.parse({}) as Record<string, unknown>;
    return Object.entries(schema.shape).map(
      ([name, setting]) =>
        `| \`${plugin.name}\` | \`${name}\` | ` +
        `${defaults[name] === undefined ? 'unset' : `\`${JSON.stringify(defaults[name])}\``} | ` +
        `${cell(setting.description ?? '')} |`,
    );
  });
  return ['| plugin | setting | default | meaning |', '|---|---|---|---|', ...rows].join('\n');
}

const TABLES = [
  {
    begin: '<!-- configuration:begin (generated from common/config.ts by `npm run docs:config`; do not edit) -->',
    end: '<!-- configuration:end -->',
    table: configurationTable,
  },
  {
    begin: '<!-- plugins:begin (generated from gateway/plugins/*/schema.ts by `npm run docs:config`; do not edit) -->',
    end: '<!-- plugins:end -->',
    table: pluginTable,
  },
];

/** `document` with the text between each pair of markers replaced by its generated table. */
export function withGeneratedTables(document: string): string {
  return TABLES.reduce((text, { begin, end, table }) => {
    const start = text.indexOf(begin);
    const stop = text.indexOf(end);
    if (start < 0 || stop < start) throw new Error(`docs/operations.md must hold the markers\n${begin}\n${end}`);
    return `${text.slice(0, start + begin.length)}\n${table()}\n${text.slice(stop)}`;
  }, document);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(OPERATIONS, withGeneratedTables(readFileSync(OPERATIONS, 'utf8')));
  console.log(
    'docs/operations.md: configuration and gateway plugin references regenerated from common/config.ts and the plugin schemas',
  );
}
