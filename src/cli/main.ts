/**
 * `npm run --silent lab -- <command>`: the simulation engine from the command line.
 *
 *   identity --server NAME            read a request's params (JSON) on stdin, print NAME:<32 hex>
 *   run SCENARIO.json [--seed N] [--out DIR]
 *   replay TRACE.jsonl --scenario SCENARIO.json [--out DIR]
 *
 * Errors: one line on standard error, exit code 2.
 */
import { commands } from './commands';

export class UsageError extends Error {}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const command = name ? commands[name] : undefined;
  if (!command) {
    const usage = Object.values(commands)
      .map((c) => `  ${c.usage}`)
      .join('\n');
    process.stderr.write(
      `${name ? `lab: unknown command '${name}'` : 'lab: no command given'}\nusage:\n${usage}\n`
    );
    return 2;
  }
  return command.run(rest);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`lab: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(2);
  }
);
