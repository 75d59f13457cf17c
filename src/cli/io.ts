/** Small IO helpers for the command line: argument parsing and standard input. */

export type ParsedArgs =
  | {
      ok: true;
      positional: string[];
      values: Record<string, string>;
      flags: Record<string, boolean>;
    }
  | { ok: false; error: string };

/** `--name value`, `--name=value` and bare `--flag`; anything unknown is an error, not ignored. */
export function parseArgs(
  args: string[],
  spec: { values?: string[]; flags?: string[] }
): ParsedArgs {
  const values: Record<string, string> = {};
  const flags: Record<string, boolean> = {};
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    if (spec.values?.includes(name)) {
      const v = eq === -1 ? args[++i] : arg.slice(eq + 1);
      if (v === undefined || (eq === -1 && v.startsWith('--')))
        return { ok: false, error: `--${name} needs a value` };
      values[name] = v;
    } else if (spec.flags?.includes(name)) {
      flags[name] = true;
    } else {
      return { ok: false, error: `unknown option --${name}` };
    }
  }
  return { ok: true, positional, values, flags };
}

export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
