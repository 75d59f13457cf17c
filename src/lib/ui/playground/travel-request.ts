/**
 * The playground's side of time travel (issue #10; the scrubber, breakpoints and forks:
 * time-travel.svelte.ts): a command whose answer is several replies, collected until one ends
 * them. `Playground.travelRequest` is this on its worker client.
 */
import type { Command, Reply } from '$lib/sim/session/protocol';
import type { SimClient } from '../worker/client';

/**
 * Send a time-travel command and collect the replies it causes until `last` says one ends them
 * (a seek: its snapshot). Rejects with the worker's error for this command.
 */
export function travelRequest(
  client: SimClient | null,
  cmd: Command,
  last: (r: Reply) => boolean
): Promise<Reply[]> {
  if (!client) return Promise.reject(new Error('the simulation worker is not running'));
  return new Promise((resolve, reject) => {
    const got: Reply[] = [];
    let id = 0;
    const off = client.on((r, re) => {
      if (re !== id) return;
      if (r.type === 'error') {
        off();
        reject(new Error(r.message));
        return;
      }
      got.push(r);
      if (last(r)) {
        off();
        resolve(got);
      }
    });
    id = client.send(cmd);
  });
}
