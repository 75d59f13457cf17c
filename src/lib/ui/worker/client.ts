/**
 * The page's side of the simulation worker: start it, send commands, route replies.
 * The worker is loaded only when a page asks for it, so it stays out of the first load.
 *
 * Every command goes out with an id (`WorkerRequest`) that the replies it causes echo
 * (`WorkerReply.re`), so `request()` waits for *its* answer: an error from another command, or
 * a reply of the same type to another command, neither rejects nor resolves it.
 */
import type { Command, Reply, WorkerReply, WorkerRequest } from '../../sim/session/protocol';
import type { LiveCommand, LiveRequest } from './live';

/** A reply and the id of the request it answers (null: news nobody asked for). */
export type ReplyListener = (r: Reply, re: number | null) => void;

export class SimClient {
  #worker: Worker;
  #listeners = new Set<ReplyListener>();
  #nextId = 1;

  constructor(worker: Worker) {
    this.#worker = worker;
    worker.onmessage = (e: MessageEvent<WorkerReply>) => {
      const { re, reply } = e.data;
      for (const l of this.#listeners) l(reply, re);
    };
  }

  static async start(): Promise<SimClient> {
    const { default: SimWorker } = await import('./sim.worker.ts?worker');
    return new SimClient(new SimWorker());
  }

  /** Post a command; returns the id its replies will carry. */
  send(cmd: Command | LiveCommand): number {
    const id = this.#nextId++;
    this.#worker.postMessage({ id, cmd } satisfies {
      id: number;
      cmd: (WorkerRequest | LiveRequest)['cmd'];
    });
    return id;
  }

  on(listener: ReplyListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Send a command and wait for its first reply of the given type; rejects with the worker's
   * error for this command (only this one).
   */
  request<T extends Reply['type']>(cmd: Command, type: T): Promise<Extract<Reply, { type: T }>> {
    return new Promise((resolve, reject) => {
      let id = 0;
      const off = this.on((r, re) => {
        if (re !== id) return;
        if (r.type === type) {
          off();
          resolve(r as Extract<Reply, { type: T }>);
        } else if (r.type === 'error') {
          off();
          reject(new Error(r.message));
        }
      });
      id = this.send(cmd);
    });
  }

  terminate(): void {
    this.#worker.terminate();
  }
}
