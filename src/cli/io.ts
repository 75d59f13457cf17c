/** Small IO helpers for the command line: argument parsing and standard input. */
import { quote } from '../lib/machine/excerpt';
import { MAX_SEED, seedFromText } from '../lib/sim/world/rng';
import { decodeText, sizeText } from '../lib/sim/input/text-input';
import { CliError } from './files';

export type ParsedArgs =
  | {
      ok: true;
      positional: string[];
      values: Record<string, string>;
      flags: Record<string, boolean>;
      /** Options that may be given more than once (`--break a --break b`), in order. */
      lists: Record<string, string[]>;
    }
  | { ok: false; error: string };

/** `--name value`, `--name=value` and bare `--flag`; anything unknown is an error, not ignored. */
export function parseArgs(
  args: string[],
  spec: { values?: string[]; flags?: string[]; lists?: string[] }
): ParsedArgs {
  const values: Record<string, string> = {};
  const lists: Record<string, string[]> = {};
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
    if (spec.values?.includes(name) || spec.lists?.includes(name)) {
      const v = eq === -1 ? args[++i] : arg.slice(eq + 1);
      if (v === undefined || (eq === -1 && v.startsWith('--')))
        return { ok: false, error: `--${name} needs a value` };
      if (spec.lists?.includes(name)) (lists[name] ??= []).push(v);
      else values[name] = v;
    } else if (spec.flags?.includes(name)) {
      flags[name] = true;
    } else {
      return { ok: false, error: `unknown option ${quote('--' + name)}` };
    }
  }
  return { ok: true, positional, values, flags, lists };
}

const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  min: 60_000,
  h: 3_600_000,
  d: 86_400_000
};

/**
 * A virtual time from the start, as typed: `30m`, `1h30m`, `90s`, `1500ms`, `2d`; a bare number is
 * milliseconds. Null when it is not one.
 */
export function parseSpan(text: string): number | null {
  const t = text.trim();
  if (/^\d+$/.test(t)) return Number(t);
  if (!/^(\d+(\.\d+)?(ms|min|s|m|h|d))+$/.test(t)) return null;
  let ms = 0;
  for (const [, n, unit] of t.matchAll(/(\d+(?:\.\d+)?)(ms|min|s|m|h|d)/g))
    ms += Number(n) * UNIT_MS[unit!]!;
  return Math.round(ms);
}

/**
 * Standard input as text, at most `maxBytes` of it (refused past that as soon as it is), decoded
 * by the lab's one rule (`text-input.ts`).
 */
export async function readStdin(maxBytes: number, what: string): Promise<string> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const c of process.stdin) {
    total += (c as Buffer).length;
    if (total > maxBytes) {
      process.stdin.destroy();
      throw new CliError(
        `standard input: the ${what} is more than ${sizeText(maxBytes)}, the limit`
      );
    }
    chunks.push(c as Buffer);
  }
  const d = decodeText(Buffer.concat(chunks));
  if (!d.ok) throw new CliError(`standard input: the ${what} cannot be read: ${d.error}`);
  return d.text;
}

/** `--seed N`: the seed (see `seedFromText`), or a one-line error naming the accepted form. */
export function parseSeed(text: string): { ok: true; seed: number } | { ok: false; error: string } {
  const seed = seedFromText(text);
  if (seed !== null) return { ok: true, seed };
  return {
    ok: false,
    error: `--seed must be a decimal integer from 0 to ${MAX_SEED} (such as 42), got ${quote(text)}`
  };
}
