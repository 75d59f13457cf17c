import { requestIdentity } from '../lib/machine/identity';
import { parseArgs, readStdin } from './io';

export interface Command {
  usage: string;
  run(args: string[]): Promise<number>;
}

function fail(message: string): number {
  process.stderr.write(`lab: ${message}\n`);
  return 2;
}

const identity: Command = {
  usage: 'identity --server NAME [--no-canonicalize] < params.json',
  async run(args) {
    const a = parseArgs(args, { values: ['server'], flags: ['no-canonicalize'] });
    if (!a.ok) return fail(a.error);
    const server = a.values.server;
    if (!server) return fail('identity: --server NAME is required');
    const text = await readStdin();
    let params: unknown;
    try {
      params = JSON.parse(text);
    } catch (e) {
      return fail(`identity: standard input is not valid JSON (${(e as Error).message})`);
    }
    if (params === null || typeof params !== 'object' || Array.isArray(params)) {
      return fail('identity: standard input must be a JSON object (the request params)');
    }
    const p = params as Record<string, unknown>;
    // Accept a whole JSON-RPC request as well as bare params.
    const bare =
      p.method === 'sampling/createMessage' && p.params && typeof p.params === 'object'
        ? p.params
        : p;
    process.stdout.write(
      requestIdentity(server, bare, { canonicalize: !a.flags['no-canonicalize'] }) + '\n'
    );
    return 0;
  }
};

export const commands: Record<string, Command> = { identity };
