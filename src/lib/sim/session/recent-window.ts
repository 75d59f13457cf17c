/**
 * A map that keeps its `size` most recently added entries (the inspector's window of a lane's
 * finished requests, by seq). The oldest is evicted from an array of the keys in the order added:
 * evicting it through `map.keys().next()` walked past every entry deleted before it (V8 keeps
 * them as holes until the table is rebuilt) — ~3 µs a request at 5,000 entries, a few per cent
 * of the worker's live play.
 */
export class RecentWindow<K, V> {
  readonly size: number;
  readonly #map = new Map<K, V>();
  /** Keys in the order added; those before `#head` are evicted. */
  #order: K[] = [];
  #head = 0;

  constructor(size: number) {
    this.size = size;
  }

  get(k: K): V | undefined {
    return this.#map.get(k);
  }

  /** Add or replace `k` (a replaced key keeps its place); the oldest go beyond `size`. */
  set(k: K, v: V): void {
    if (!this.#map.has(k)) this.#order.push(k);
    this.#map.set(k, v);
    while (this.#map.size > this.size) this.#map.delete(this.#order[this.#head++]!);
    if (this.#head > this.size) {
      this.#order = this.#order.slice(this.#head);
      this.#head = 0;
    }
  }

  /** A window of the entries `keep` picks, in the order they were added. */
  filter(keep: (v: V) => boolean): RecentWindow<K, V> {
    const out = new RecentWindow<K, V>(this.size);
    for (let i = this.#head; i < this.#order.length; i++) {
      const k = this.#order[i]!;
      const v = this.#map.get(k)!;
      if (keep(v)) out.set(k, v);
    }
    return out;
  }
}
