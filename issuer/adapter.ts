// oidc-provider storage on the oidc_payloads table (one row per model + id), plus the Client model read from the
// clients table. Codes and refresh tokens are single use: consuming is compare-and-set, and any second use of one
// kills its whole family (every row of the grant, the Grant itself and the PDP-visible session).
import type { Knex } from 'knex';
import { errors, type Adapter, type AdapterPayload } from 'oidc-provider';
import { findClientMetadata, type ClientOptions } from './clients.js';
import { fixedStatement, storableText } from '../common/db.js';
import { killFamily, revokeSession } from '../common/sessions.js';

/** Models whose second use is a replay (contract §3 "Token lifecycle"), named as operators know them. */
const SINGLE_USE = new Map<string, Reused>([
  ['AuthorizationCode', 'authorization_code'],
  ['RefreshToken', 'refresh_token'],
]);
type Reused = 'authorization_code' | 'refresh_token';

/** Told of each family killed because a single-use token was used again (the metric token_family_kills_total). */
export type OnReplay = (reused: Reused) => void;

interface Row {
  payload: AdapterPayload;
  consumed_at: Date | null;
  expires_at: Date | null;
  grant_id: string | null;
}

const isLive = (row: Row) => row.expires_at === null || row.expires_at.getTime() > Date.now();

// find, consume and upsert run on every token request: statements compiled once, run prepared.
const ROW = ['payload', 'consumed_at', 'expires_at', 'grant_id'] as const;
const rowById = fixedStatement<[string, string], Row>((knex, model, id) =>
  knex('oidc_payloads')
    .where({ model, id })
    .first(...ROW),
);
const rowByUid = fixedStatement<[string, string], Row>((knex, model, uid) =>
  knex('oidc_payloads')
    .where({ model, uid })
    .first(...ROW),
);
const consumeRow = fixedStatement<[string, string]>((knex, model, id) =>
  knex('oidc_payloads').where({ model, id }).whereNull('consumed_at').update({ consumed_at: knex.fn.now() }),
);
const upsertRow = fixedStatement<[string, string, string, string | null, string | null, Date | null]>(
  (knex, model, id, payload, grantId, uid, expiresAt) =>
    knex('oidc_payloads')
      .insert({ model, id, payload, grant_id: grantId, uid, expires_at: expiresAt })
      .onConflict(['model', 'id'])
      .merge(['payload', 'grant_id', 'uid', 'expires_at']),
);

class PayloadAdapter implements Adapter {
  constructor(
    private readonly knex: Knex,
    private readonly model: string,
    private readonly onReplay: OnReplay,
  ) {}

  private async killFamilyOf(grantId: string | null | undefined): Promise<void> {
    if (!grantId) return;
    await killFamily(this.knex, grantId);
    this.onReplay(SINGLE_USE.get(this.model)!);
  }

  private rows() {
    return this.knex('oidc_payloads').where('model', this.model);
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    // A Grant is its own family, so one `grant_id` match finds every row of a family, the Grant included.
    const grantId = payload.grantId ?? (this.model === 'Grant' ? id : null);
    const expiresAt = expiresIn ? new Date(Date.now() + expiresIn * 1000) : null;
    await upsertRow(this.knex, this.model, id, JSON.stringify(payload), grantId, payload.uid ?? null, expiresAt);
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    if (!storableText(id)) return undefined; // ids come from requests (codes, tokens, cookies)
    const {
      rows: [row],
    } = await rowById(this.knex, this.model, id);
    if (!row) return undefined;
    if (row.consumed_at && SINGLE_USE.has(this.model)) {
      // A used code or refresh token presented again is a replay. Killing the family here, before oidc-provider's
      // own checks, means a replay that also fails another check (e.g. a wider scope) still ends the family.
      await this.killFamilyOf(row.grant_id);
      return undefined;
    }
    return this.toPayload(row);
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    if (!storableText(uid)) return undefined;
    const {
      rows: [row],
    } = await rowByUid(this.knex, this.model, uid);
    return row ? this.toPayload(row) : undefined;
  }

  async findByUserCode(): Promise<undefined> {
    return undefined; // device flow is not enabled
  }

  async consume(id: string): Promise<void> {
    const { rowCount } = await consumeRow(this.knex, this.model, id);
    if (rowCount! > 0 || !SINGLE_USE.has(this.model)) return;
    // Lost the race against a concurrent redemption (or the row is gone): both requests used the same token, so
    // the family dies and this request fails, instead of two live chains.
    const row = await this.rows().where('id', id).first('grant_id');
    await this.killFamilyOf(row?.grant_id);
    throw new errors.InvalidGrant(
      `${this.model === 'RefreshToken' ? 'refresh token' : 'authorization code'} already used`,
    );
  }

  async destroy(id: string): Promise<void> {
    await this.rows().where('id', id).delete();
    if (this.model === 'Grant') await revokeSession(this.knex, id);
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.rows().where('grant_id', grantId).delete();
    await revokeSession(this.knex, grantId);
  }

  private toPayload(row: Row): AdapterPayload | undefined {
    if (!isLive(row)) return undefined;
    return row.consumed_at ? { ...row.payload, consumed: Math.floor(row.consumed_at.getTime() / 1000) } : row.payload;
  }
}

/** Clients are read-only here: they are managed through the admin API, never registered through the issuer. */
class ClientAdapter implements Adapter {
  constructor(
    private readonly knex: Knex,
    private readonly opts: ClientOptions,
  ) {}

  async find(id: string): Promise<AdapterPayload | undefined> {
    return storableText(id) ? findClientMetadata(this.knex, id, this.opts) : undefined;
  }

  async upsert(): Promise<void> {
    throw new Error('clients are not registered through the issuer');
  }
  async findByUid(): Promise<undefined> {
    return undefined;
  }
  async findByUserCode(): Promise<undefined> {
    return undefined;
  }
  async consume(): Promise<void> {}
  async destroy(): Promise<void> {}
  async revokeByGrantId(): Promise<void> {}
}

/** The `adapter` option: one adapter per model name. */
export function createAdapterFactory(
  knex: Knex,
  clientOpts: ClientOptions,
  onReplay: OnReplay = () => undefined,
): (model: string) => Adapter {
  return (model) =>
    model === 'Client' ? new ClientAdapter(knex, clientOpts) : new PayloadAdapter(knex, model, onReplay);
}
