// `npm run admin -- dump --tenant <id>`, `diff <file>` and `apply <file> [--prune]`: a tenant's configuration as one
// YAML file a team keeps in git (docs/admin-console.md, "Keeping a tenant in git"). dump writes it; diff reads the
// tenant through the admin API and prints what apply would change, object by object; apply makes exactly those
// changes through the admin API, in order, each with If-Match set to the ETag the diff read, so an edit made
// meanwhile is reported (412) and never overwritten. A bad file is refused before anything is sent, every problem
// listed as file:line. Exit codes: 0 done (diff: nothing would change), 1 the API refused (apply: a change was
// refused, one made meanwhile included), 2 usage or a bad file (nothing sent), 3 the API unreachable or failing,
// 4 (diff only) something would change.
import {
  AdminCallFailed,
  COMMON_FLAGS_HELP,
  UsageError,
  adminJson,
  adminTarget,
  COMMON_OPTIONS,
  exitCodeOf,
  parseCommandLine,
  type AdminTarget,
} from './admin-call.js';
import { readTenantFile, type CheckedFile } from './tenant-file.js';
import { applyChanges, planChanges, readTenantState, toFile, toYaml, type Change, type Plan } from './tenant-config.js';

export interface ConfigIo {
  out(text: string): void;
  err(text: string): void;
}

export const DIFF_FOUND = 4;

const HELP = {
  dump: [
    'npm run admin -- dump --tenant <tenantId> > tenant.yaml',
    '',
    "The tenant's configuration as YAML (infra/tenant-file.schema.json): plan and limits, apps with redirect URIs and",
    'settings, grants, service accounts with capabilities, extensions with schemas. Never a password, secret or record.',
    'The same tenant dumps to the same bytes.',
  ],
  diff: [
    'npm run admin -- diff <file> [--tenant <tenantId>] [--prune]',
    '',
    'What apply would change, one line per change. Exit 0 when nothing would, 4 when something would, 2 for a bad',
    'file (every problem as file:line). --tenant aims the file at another tenant than the one it names.',
  ],
  apply: [
    'npm run admin -- apply <file> [--tenant <tenantId>] [--prune]',
    '',
    'Makes the changes diff shows, in order, through the admin API (each audited), with If-Match: an object changed',
    'since it was read is reported (exit 1) and not overwritten, and nothing after it is changed. New secrets of apps',
    'it creates are printed once. Objects the file does not name are left alone; --prune deletes apps and withdraws',
    'grants the file does not name (service accounts and extensions have no delete: they are listed).',
  ],
};
const help = (name: keyof typeof HELP) => [...HELP[name], '', COMMON_FLAGS_HELP].join('\n');

/** True for a tenant admin key (the operator token has no key_ prefix): the same rule as the audit aliases. */
const isTenantKey = (target: AdminTarget) => target.token.startsWith('key_');

/** The catalogue's capability ids (any admin caller reads it). */
async function capabilityIds(target: AdminTarget): Promise<Set<string>> {
  const { items } = await adminJson<{ items: { id: string }[] }>(target, 'GET', '/capabilities');
  return new Set(items.map((c) => c.id));
}

/** The file, checked; its problems listed and thrown as a usage error (exit 2, nothing sent). */
async function checkedFile(target: AdminTarget, path: string): Promise<CheckedFile> {
  const reading = readTenantFile(path, await capabilityIds(target));
  if (reading.ok) return reading.file;
  throw new BadFile(reading.problems);
}

class BadFile extends Error {
  constructor(readonly problems: string[]) {
    super(`${problems.length} problem(s) in the file; nothing was changed`);
  }
}

/** Reads the tenant and plans the file's changes; a plan with problems is a bad file. */
async function planOf(target: AdminTarget, file: CheckedFile, flags: { tenant?: string; prune?: boolean }) {
  const tenantId = flags.tenant ?? file.config.tenant;
  const state = await readTenantState(target, tenantId);
  const plan = planChanges(state, file, { prune: flags.prune === true, tenantKey: isTenantKey(target) });
  if (plan.problems.length) throw new BadFile(plan.problems);
  return plan;
}

const printPlan = (plan: Plan, io: ConfigIo) => {
  for (const change of plan.changes) io.out(change.summary);
  for (const note of plan.notes) io.out(`# ${note}`);
};

/** Runs one command of the family; returns the exit code. */
export function runConfigCommand(
  name: 'dump' | 'diff' | 'apply',
  args: string[],
  env: Record<string, string | undefined>,
  io: ConfigIo,
): Promise<number> {
  return exitCodeOf(
    async () => {
      const { flags, files } = parseConfigArgs(args);
      if (flags.help) return (io.out(help(name)), 0);
      const target = adminTarget(flags, env);
      try {
        if (name === 'dump') {
          if (!flags.tenant) throw new UsageError('dump needs --tenant <tenantId>');
          io.out(toYaml(toFile(await readTenantState(target, flags.tenant))).trimEnd());
          return 0;
        }
        if (files.length !== 1) throw new UsageError(`name one file: npm run admin -- ${name} <file>`);
        const path = files[0]!;
        const plan = await planOf(target, await checkedFile(target, path), flags);
        if (name === 'diff') {
          printPlan(plan, io);
          if (!plan.changes.length) io.err('diff: nothing would change');
          return plan.changes.length ? DIFF_FOUND : 0;
        }
        return await applyPlan(target, plan, io);
      } catch (err) {
        if (!(err instanceof BadFile)) throw err;
        io.err([err.message, ...err.problems.map((p) => `  ${p}`)].join('\n'));
        return 2;
      }
    },
    io,
    help(name),
  );
}

/** The flags and the file named among them. */
function parseConfigArgs(args: string[]) {
  const { values, positionals } = parseCommandLine({
    args,
    options: { ...COMMON_OPTIONS, tenant: { type: 'string' }, prune: { type: 'boolean' } },
    allowPositionals: true,
  });
  return { flags: values, files: positionals };
}

/** Makes a plan's changes, printing each and new secrets once; the exit code (1 when one was refused, 412 included). */
export async function applyPlan(target: AdminTarget, plan: Plan, io: ConfigIo): Promise<number> {
  for (const note of plan.notes) io.out(`# ${note}`);
  const started = performance.now();
  const result = await applyChanges(target, plan.changes, (change: Change, answer) => {
    io.out(change.summary);
    // A new confidential app's secret exists only in this answer: shown once, here.
    if (typeof answer.clientSecret === 'string')
      io.out(`  secret of ${String(answer.clientId)} (shown once, store it now): ${answer.clientSecret}`);
  });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  if (result.ok) {
    io.err(`apply: ${result.applied} change(s) made in ${seconds} s`);
    return 0;
  }
  const stale = result.error instanceof AdminCallFailed && result.error.status === 412;
  io.err(
    [
      stale
        ? `apply stopped: ${result.failed.summary.slice(2)} — it changed since diff read it (412), so it was not ` +
          'overwritten. Run diff again and review.'
        : `apply stopped at: ${result.failed.summary}`,
      result.error.message,
      `${result.applied} change(s) were made before it; none after it.`,
    ].join('\n'),
  );
  return result.error instanceof AdminCallFailed ? result.error.exitCode : 1;
}
