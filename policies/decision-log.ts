// Decision logs, written in batches off the request path (as OPA ships decision logs): one multi-row insert per
// flush instead of one write per decision. A failed write is logged and dropped; it never delays or flips a decision.
import type { Knex } from 'knex';
import type { Logger } from '../common/log.js';
import { batchWriter, type BatchWriter } from '../common/batch-writer.js';

export interface DecisionLogRow {
  request_id: string;
  tenant_id: string;
  client_id: string;
  subject: string;
  capability: string;
  allow: boolean;
  code: string | null;
  check_name: string;
}

export type DecisionLog = BatchWriter<DecisionLogRow>;

export function batchedDecisionLog(knex: Knex, log: Logger): DecisionLog {
  return batchWriter<DecisionLogRow>(
    {
      name: 'decision_log',
      write: (rows) => knex('decision_logs').insert(rows),
      batchSize: 500,
      flushIntervalMs: 200,
      onFailure: 'drop',
      maxPending: 20_000,
    },
    log,
  );
}
