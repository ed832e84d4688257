// `npm run coverage`'s report: line and branch coverage of the product code per folder (one folder per service, plus
// common/, wire/ and infra/), and the least-covered files, from the json-summary jest's V8 coverage writes.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

interface Counts {
  total: number;
  covered: number;
}
type FileSummary = Record<'lines' | 'branches', Counts>;

const LEAST_COVERED = 8;
/** Files this short are left out of the least-covered list: a few lines say little about a file. */
const MIN_LINES = 20;

const pct = (c: Counts) => (c.total === 0 ? 100 : (100 * c.covered) / c.total);
const cell = (c: Counts) => `${pct(c).toFixed(1).padStart(5)} %`;
const add = (a: Counts, b: Counts): Counts => ({ total: a.total + b.total, covered: a.covered + b.covered });

export function printCoverage(summaryPath: string): void {
  const summary = JSON.parse(readFileSync(summaryPath, 'utf8')) as Record<string, FileSummary>;
  const files = Object.entries(summary)
    .filter(([path]) => path !== 'total')
    .map(([path, counts]) => ({ path: relative(process.cwd(), path), ...counts }));
  const folders = new Map<string, FileSummary & { files: number }>();
  for (const file of files) {
    const name = file.path.split('/')[0]!;
    const folder = folders.get(name) ?? {
      lines: { total: 0, covered: 0 },
      branches: { total: 0, covered: 0 },
      files: 0,
    };
    folders.set(name, {
      lines: add(folder.lines, file.lines),
      branches: add(folder.branches, file.branches),
      files: folder.files + 1,
    });
  }
  const total = summary.total!;
  console.log('\ncoverage of the product code (V8, through jest):');
  console.log(`  ${'folder'.padEnd(10)} ${'lines'.padStart(7)} ${'branches'.padStart(9)}  files`);
  for (const [name, folder] of [...folders].sort(([a], [b]) => a.localeCompare(b)))
    console.log(
      `  ${`${name}/`.padEnd(10)} ${cell(folder.lines)} ${cell(folder.branches).padStart(9)}  ${folder.files}`,
    );
  console.log(`  ${'all'.padEnd(10)} ${cell(total.lines)} ${cell(total.branches).padStart(9)}  ${files.length}`);
  console.log(`least-covered files (lines; files of ${MIN_LINES} lines or more):`);
  for (const file of files
    .filter((f) => f.lines.total >= MIN_LINES)
    .sort((a, b) => pct(a.lines) - pct(b.lines))
    .slice(0, LEAST_COVERED))
    console.log(`  ${cell(file.lines)}  ${file.path} (${file.lines.total - file.lines.covered} lines not run)`);
}
