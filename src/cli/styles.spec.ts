import { describe, expect, it } from 'vitest';
import { matrixText, refusalMatrix } from '../lib/sim/report/refusal-matrix';
import { commands, runCommand } from './commands';
import { readFileSync } from 'node:fs';

const file = 'static/scenarios/refusal-codes.json';

describe('lab styles', () => {
  const m = refusalMatrix(JSON.parse(readFileSync(file, 'utf8')), 'B');
  if (!m.ok) throw new Error(JSON.stringify(m.errors));

  it('prints as a table, and `lab styles` prints the same', async () => {
    const text = matrixText(m.rows);
    expect(text.split('\n')).toHaveLength(7);
    let out = '';
    const code = await runCommand(commands.styles!, [file], {
      out: (s) => void (out += s),
      err: () => {},
      stdin: async () => ''
    });
    expect(code).toBe(0);
    expect(out).toBe(`lane B, seed 3, one run per refusal style:\n${text}\n`);
  });

  it('refuses a lane that does not exist, in one line', async () => {
    let err = '';
    const code = await runCommand(commands.styles!, [file, '--lane', 'C'], {
      out: () => {},
      err: (s) => void (err += s),
      stdin: async () => ''
    });
    expect(code).toBe(2);
    expect(err.trimEnd().split('\n')).toHaveLength(1);
    expect(err).toMatch(/^lab: styles: --lane must be A or B, got .*C/);
  });
});
