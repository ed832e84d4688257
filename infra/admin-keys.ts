// `npm run admin -- keys generate|rotate|retire`: the issuer's signing-key set (ISSUER_JWKS), made and changed on the
// operator's machine, never through the API (private keys do not travel). Each prints a whole JWKS on stdout for the
// Secret; docs/operations.md "Signing keys" is the runbook. The first key signs; every key in the set is published,
// so a retired key's tokens stop verifying only when it leaves the set.
import { readFileSync } from 'node:fs';
import type { JWK } from 'jose';
import { ConfigError } from '../common/config.js';
import { parseCommandLine } from './admin-call.js';
import { newSigningKey, parseJwks } from '../issuer/keys.js';

const KEYS_USAGE = `npm run admin -- keys <command> [--file <jwks.json>]

  generate               a new set with one key
  rotate                 the current set with a new signing key first (the old ones stay published)
  retire --kid <kid>     the current set without an old key (never the signing one)

The current set is read from --file, else ISSUER_JWKS, else ISSUER_JWKS_FILE. The new set goes to stdout.`;

interface KeysIo {
  out(text: string): void;
  err(text: string): void;
}

async function currentSet(file: string | undefined, env: Record<string, string | undefined>): Promise<JWK[]> {
  if (file) return parseJwks(readFileSync(file, 'utf8'), file);
  if (env.ISSUER_JWKS) return parseJwks(env.ISSUER_JWKS, 'ISSUER_JWKS');
  if (env.ISSUER_JWKS_FILE)
    return parseJwks(readFileSync(env.ISSUER_JWKS_FILE, 'utf8'), `ISSUER_JWKS_FILE=${env.ISSUER_JWKS_FILE}`);
  throw new ConfigError('no current key set: pass --file <jwks.json> or set ISSUER_JWKS');
}

/** Runs one `keys` command line; returns the exit code (0 done, 2 usage or an unusable key set). */
export async function runKeys(argv: string[], env: Record<string, string | undefined>, io: KeysIo): Promise<number> {
  let parsed;
  try {
    parsed = parseCommandLine({
      args: argv,
      allowPositionals: true,
      options: { file: { type: 'string' }, kid: { type: 'string' }, help: { type: 'boolean' } },
    });
  } catch (err) {
    io.err(`${(err as Error).message}\n\n${KEYS_USAGE}`);
    return 2;
  }
  const {
    positionals: [command],
    values,
  } = parsed;
  if (values.help || !command) {
    (values.help ? io.out : io.err)(KEYS_USAGE);
    return values.help ? 0 : 2;
  }
  try {
    let keys: JWK[];
    if (command === 'generate') keys = [await newSigningKey()];
    else if (command === 'rotate') keys = [await newSigningKey(), ...(await currentSet(values.file, env))];
    else if (command === 'retire') {
      const current = await currentSet(values.file, env);
      const at = current.findIndex((k) => k.kid === values.kid);
      if (!values.kid || at < 0)
        throw new ConfigError(`--kid must name a key of the set (${current.map((k) => k.kid).join(', ')})`);
      if (at === 0)
        throw new ConfigError(
          `${values.kid} is the signing key: rotate first, then retire it once its tokens have expired`,
        );
      keys = current.filter((_, i) => i !== at);
    } else {
      io.err(`unknown keys command "${command}"\n\n${KEYS_USAGE}`);
      return 2;
    }
    io.out(JSON.stringify({ keys }));
    return 0;
  } catch (err) {
    if (!(err instanceof ConfigError) && (err as NodeJS.ErrnoException).code === undefined) throw err;
    io.err((err as Error).message);
    return 2;
  }
}
