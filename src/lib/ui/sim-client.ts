/**
 * The page's side of the simulation worker: start it, send commands, route replies.
 * The worker is loaded only when a page asks for it, so it stays out of the first load.
 */
import type { Command, Reply } from '../sim/protocol';

export class SimClient {
  #worker: Worker;
  #listeners = new Set<(r: Reply) => void>();

  constructor(worker: Worker) {
    this.#worker = worker;
    worker.onmessage = (e: MessageEvent<Reply>) => {
      for (const l of this.#listeners) l(e.data);
    };
  }

  static async start(): Promise<SimClient> {
    const { default: SimWorker } = await import('./sim.worker.ts?worker');
    return new SimClient(new SimWorker());
  }

  send(cmd: Command): void {
    this.#worker.postMessage(cmd);
  }

  on(listener: (r: Reply) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Send a command and wait for the first reply of the given type. */
  request<T extends Reply['type']>(cmd: Command, type: T): Promise<Extract<Reply, { type: T }>> {
    return new Promise((resolve, reject) => {
      const off = this.on((r) => {
        if (r.type === type) {
          off();
          resolve(r as Extract<Reply, { type: T }>);
        } else if (r.type === 'error') {
          off();
          reject(new Error(r.message));
        }
      });
      this.send(cmd);
    });
  }

  terminate(): void {
    this.#worker.terminate();
  }
}
