/**
 * For tests: a {@link ChunkStore} in a Map (what IndexedDB does for the worker's audit index),
 * each chunk stored as a structured clone, counting reads; `fail` makes the next calls reject.
 */
import type { ChunkData, ChunkStore } from './audit-index';

export interface MapChunkStore extends ChunkStore {
  readonly chunks: Map<number, ChunkData>;
  /** Chunk numbers read back, in order. */
  readonly reads: number[];
  /** Make writes and reads reject with this message (null: work again). */
  fail: string | null;
}

export function mapChunkStore(): MapChunkStore {
  const chunks = new Map<number, ChunkData>();
  const store: MapChunkStore = {
    chunks,
    reads: [],
    fail: null,
    put(k, chunk) {
      if (store.fail !== null) return Promise.reject(new Error(store.fail));
      chunks.set(k, structuredClone(chunk));
      return Promise.resolve();
    },
    get(k) {
      store.reads.push(k);
      if (store.fail !== null) return Promise.reject(new Error(store.fail));
      const c = chunks.get(k);
      return Promise.resolve(c === undefined ? undefined : structuredClone(c));
    },
    drop(from) {
      for (const k of [...chunks.keys()]) if (k >= from) chunks.delete(k);
    }
  };
  return store;
}
