// Keys this gateway process refuses from memory until a time: the flood guard's denied subjects. A refusal from a block
// costs no Redis round trip, no PDP call and no decision-log row. (The rate-limit layers use rate-limiter-flexible's
// in-memory blocks: they consume, while the flood guard counts only what the PDP denied, after the answer, with
// `penalty`, which the library never blocks on, and must block during a Redis outage too, from its insurance's count.)

/** Keys blocked at once, at most; the oldest block is dropped first, so a flood of keys cannot grow memory. */
const MAX_BLOCKED = 100_000;

export interface LocalBlocks {
  /** Refuses `key` for `ms` from now (a later block of the same key replaces it). */
  block(key: string, ms: number): void;
  /** Milliseconds until `key` may pass again; 0 when it may now. */
  waitMs(key: string): number;
}

export function localBlocks(maxBlocked = MAX_BLOCKED): LocalBlocks {
  /** Key → when its block ends (ms since the epoch), oldest block first. */
  const until = new Map<string, number>();
  return {
    block(key, ms) {
      until.delete(key);
      until.set(key, Date.now() + ms);
      if (until.size > maxBlocked) until.delete(until.keys().next().value!);
    },
    waitMs(key) {
      const end = until.get(key);
      if (end === undefined) return 0;
      const left = end - Date.now();
      if (left > 0) return left;
      until.delete(key);
      return 0;
    },
  };
}
