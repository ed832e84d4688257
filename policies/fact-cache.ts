// The PDP's decision facts in memory, valid up to a revision of the database (migration 011): each fact is kept under
// the name the change log uses for it, so a change evicts exactly the fact it altered. Bounded: the least recently
// used facts go first, and a fact not held is read from the database as before.
import { BoundedLru } from '../common/bounded-lru.js';

/** Facts held at most, by default (PDP_FACT_CACHE_ENTRIES); see docs/decisions.md for what one costs. */
export const DEFAULT_FACT_ENTRIES = 100_000;

/** The change log's name for everything: a change that may alter any fact held. */
const EVERYTHING = 'all';

export class FactCache {
  private readonly facts: BoundedLru<string, unknown>;
  /** The revision every fact held is valid at (or later); -1 before the first reading. */
  private at = -1;

  constructor(maxEntries = DEFAULT_FACT_ENTRIES) {
    this.facts = new BoundedLru(maxEntries);
  }

  get revision(): number {
    return this.at;
  }

  get size(): number {
    return this.facts.size;
  }

  /**
   * Applies a reading sent when the cache was at `from`: the database is at `revision`, and `changed` names the facts
   * changed after `from`, one per revision in order, complete only if it holds revision − from of them (else, or on
   * `all`, everything goes). A reading overtaken by one applied meanwhile changes nothing. A revision below the one the
   * reading was sent from means another history (a database restored from a backup): everything goes.
   */
  advance(from: number, revision: number, changed: string[]): void {
    if (revision === this.at || (revision < this.at && from < this.at)) return;
    const complete = from >= 0 && revision > from && changed.length === revision - from;
    if (!complete || changed.includes(EVERYTHING)) this.facts.clear();
    else for (const fact of changed) this.facts.delete(fact);
    this.at = revision;
  }

  get<T>(fact: string): T | undefined {
    return this.facts.get(fact) as T | undefined;
  }

  /**
   * Keeps a fact read from the database. Only a reading made at this revision or later may be kept: the caller passes
   * the revision the cache had when the reading began, and a cache that has moved since (and may have evicted this
   * very fact) keeps nothing.
   */
  keep(readAt: number, fact: string, value: unknown): void {
    if (readAt !== this.at || value === undefined) return;
    this.facts.set(fact, value);
  }
}
