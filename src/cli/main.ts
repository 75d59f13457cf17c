/**
 * `npm run --silent lab -- <command>`: the simulation engine from the command line.
 *
 *   identity --server NAME            read a request's params (JSON) on stdin, print NAME:<32 hex>
 *   run SCENARIO.json [--seed N] [--out DIR] [--restart-at TIME]... [--break COND]...
 *   replay TRACE.jsonl --scenario SCENARIO.json [--out DIR]   (an imported trace: + the what-if)
 *   import FILE... --out TRACE.jsonl [--format F] [--server NAME]   an MCP client's logs as a trace
 *   styles SCENARIO.json [--lane A|B] [--seed N]   one run per refusal style, as a matrix
 *   sweep SWEEP.json [--workers N] [--out DIR] [--require EXPR]...   a grid of settings × seeds
 *   help                              the usage, with every option and the exit codes
 *
 * A file argument may be `-` for standard input. Inputs are bounded and decoded as in `files.ts`.
 *
 * Exit codes: 0 done; 1 `sweep --require` met by no point; 2 bad input (one line on standard error); 3 a guarantee broken;
 * 4 `run --break` stopped at a breakpoint (its facts as JSON on standard output).
 */
import { quote } from '../lib/machine/excerpt';
import { sha256Rounds } from '../lib/machine/sha256';
import { commands } from './commands';

export class UsageError extends Error {}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const command = name ? commands[name] : undefined;
  const usage = Object.values(commands)
    .map((c) => `  ${c.usage}`)
    .join('\n');
  if (name === 'help' || name === '--help' || name === '-h') {
    process.stdout.write(`usage: lab <command>\n${usage}\n`);
    return 0;
  }
  if (!command) {
    process.stderr.write(
      `${name ? `lab: unknown command ${quote(name)}` : 'lab: no command given'}\nusage:\n${usage}\n`
    );
    return 2;
  }
  // A run here is one synchronous loop: the faster SHA-256 rounds, which the page fetches only
  // once a run has hashed enough, would never arrive during it. Loading them costs Node nothing.
  await sha256Rounds(true).ready;
  return command.run(rest);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`lab: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(2);
  }
);
