/**
 * For tests: a run's durable storage as the worker's, in memory — a lane's decision store that
 * says everything is saved, and the audit log keyed by row (appended at `nextKey`, cut by
 * `truncate`), so a reload or an in-place seek can be driven without IndexedDB.
 */
import type { AuditRecord } from '../../machine/types';
import { SharedDecisionStore } from '../../store/shared-store';

/** A durable lane's store whose every decision is on disk. */
export class DiskStore extends SharedDecisionStore {
  status() {
    return { saved: this.count(), heldInMemory: 0, failure: null };
  }
}

/** The durable audit log, in memory: rows by key, appended at `nextKey`, cut by `truncate`. */
export class MemoryAuditLog {
  rows: AuditRecord[] = [];
  get nextKey(): number {
    return this.rows.length;
  }
  append(r: AuditRecord): void {
    this.rows.push(structuredClone(r));
  }
  truncate(n: number): void {
    this.rows.length = Math.min(this.rows.length, n);
  }
  all() {
    return this.rows;
  }
  clear() {
    this.rows = [];
  }
  count() {
    return this.rows.length;
  }
  status() {
    return { saved: this.rows.length, heldInMemory: 0, failure: null };
  }
}
