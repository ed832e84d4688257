// The PDP's decision facts in memory, valid up to a revision of the database (migration 012): each fact is kept under
// the name the change log uses for it, so a change evicts exactly the fact it altered. Bounded: the least recently
// used facts go first, and a fact not held is read from the database as before.

/** Facts held at most, by default (PDP_FACT_CACHE_ENTRIES); see docs/decisions.md for what one costs. */
export const DEFAULT_FACT_ENTRIES = 100_000;

/** The change log's name for everything: a change that may alter any fact held. */
const EVERYTHING = 'all';

export class FactCache {
  /** A Map iterates in insertion order, and a fact is re-inserted when used: the first key is the least recent. */
  private readonly facts = new Map<string, unknown>();
  /** The revision every fact held is valid at (or later); -1 before the first reading. */
  private at = -1;

  constructor(private readonly maxEntries = DEFAULT_FACT_ENTRIES) {}

  get revision(): number {
    return this.at;
  }

  get size(): number {
    return this.facts.size;
  }

  /**
   * Moves to `revision`, evicting the facts the changes after this one named: `changed` lists them (in any order,
   * possibly with some already applied), or is undefined when the log no longer holds them all, and everything goes.
   * The same revision again changes nothing. A lower one (a reading overtaken by a later one, or a database restored
   * from a backup) clears everything: a lost fact is only read again, a kept one could be from another history.
   */
  advance(revision: number, changed: string[] | undefined): void {
    if (revision === this.at) return;
    if (!changed || revision < this.at || this.at < 0 || changed.includes(EVERYTHING)) this.facts.clear();
    else for (const fact of changed) this.facts.delete(fact);
    this.at = revision;
  }

  get<T>(fact: string): T | undefined {
    const value = this.facts.get(fact);
    if (value === undefined) return undefined;
    this.facts.delete(fact);
    this.facts.set(fact, value);
    return value as T;
  }

  /**
   * Keeps a fact read from the database. Only a reading made at this revision or later may be kept: the caller passes
   * the revision the cache had when the reading began, and a cache that has moved since (and may have evicted this
   * very fact) keeps nothing.
   */
  keep(readAt: number, fact: string, value: unknown): void {
    if (readAt !== this.at || value === undefined) return;
    this.facts.delete(fact);
    this.facts.set(fact, value);
    if (this.facts.size > this.maxEntries) this.facts.delete(this.facts.keys().next().value!);
  }
}
