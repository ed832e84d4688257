// Ending authorizations, shared by the issuer (replay detection) and the admin API (revoking an account's sessions).
// sessions.id is the oidc-provider grant id: one session per consented authorization, and every code and refresh
// token of that authorization (its family) carries the same grant_id in oidc_payloads.
import type { Knex } from 'knex';

type Db = Knex | Knex.Transaction;

/** Marks the session revoked, so the PDP refuses access tokens already issued from it (403 subject_revoked). */
export async function revokeSession(db: Db, grantId: string): Promise<void> {
  await db('sessions').where('id', grantId).whereNull('revoked_at').update({ revoked_at: db.fn.now() });
}

/** Ends one token family: its codes, refresh tokens and Grant are deleted and its session revoked. */
export async function killFamily(knex: Knex, grantId: string): Promise<void> {
  await knex.transaction(async (trx) => {
    await trx('oidc_payloads').where('grant_id', grantId).delete();
    await revokeSession(trx, grantId);
  });
}

/**
 * Ends every session of an account: each consented authorization with its token family, and, for a person's login
 * account, the remembered browser logins (oidc-provider Session rows, keyed by the personId), so the next
 * authorization asks for the password again. A later sign-in starts a new, unaffected session.
 */
export async function revokeAccountSessions(knex: Knex, accountId: string): Promise<void> {
  await knex.transaction(async (trx) => {
    const grantIds = trx('sessions').where('account_id', accountId).select('id');
    await trx('oidc_payloads').whereIn('grant_id', grantIds).delete();
    await trx('sessions').where('account_id', accountId).whereNull('revoked_at').update({ revoked_at: trx.fn.now() });
    const account = await trx('accounts').where('id', accountId).first('person_id');
    if (account?.person_id)
      await trx('oidc_payloads')
        .where('model', 'Session')
        .whereRaw(`payload->>'accountId' = ?`, [account.person_id])
        .delete();
  });
}
