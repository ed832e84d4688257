// A map of at most `maxEntries` entries, the least recently used out first: the hot paths' memories (verified tokens,
// DPoP proof keys and URLs, the PDP's facts) are bounded this one way. A Map iterates in insertion order and an entry
// read is inserted again, so its first key is always the least recently used.
export class BoundedLru<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(private readonly maxEntries: number) {}

  get size(): number {
    return this.entries.size;
  }

  /** The value held for `key`, which becomes the most recently used; undefined when none is held. */
  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  /** Holds `value` as the most recently used, letting the least recently used go when the map is full. */
  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
