/**
 * `npm run bench:input`: what reading a trace at its limit costs (issue #19). A 64-million-
 * character trace (195,000 request lines: long prompts, and every fourth line with 14 metadata
 * members) is parsed with `parseTrace`, and its lines are put through each step on their own:
 * `JSON.parse`, the duplicate-member check that runs beside it (`duplicateIn`: colons against
 * keys) and the full search it falls back to (`findDuplicateMember`). Best of 5 each, steps
 * measured back to back so the ratios hold on a busy machine; read them beside the load printed.
 *
 * Figures, not assertions.
 */
import { loadavg } from 'node:os';
import { duplicateIn, findDuplicateMember } from '../src/lib/machine/policy/json-strict';
import { LIMITS } from '../src/lib/sim/input/limits';
import { parseTrace } from '../src/lib/sim/input/trace';

function traceAtTheLimit(): string {
  const lines: string[] = [];
  let chars = 0;
  for (let i = 0; ; i++) {
    const heavy = i % 4 === 0;
    const params: Record<string, unknown> = {
      messages: [
        {
          role: 'user',
          content: {
            type: 'text',
            text: `Summarise release ${i}: ` + 'lorem ipsum dolor sit amet '.repeat(heavy ? 2 : 6)
          }
        }
      ],
      maxTokens: 400
    };
    if (heavy)
      params.metadata = Object.fromEntries(Array.from({ length: 14 }, (_, k) => [`k${k}`, k]));
    const line = JSON.stringify({ t: i * 10, server: `s${i % 50}`, type: 'request', params });
    if (chars + line.length + 1 > LIMITS.traceChars) break;
    lines.push(line);
    chars += line.length + 1;
  }
  return lines.join('\n') + '\n';
}

function best(runs: number, f: () => void): number {
  let min = Infinity;
  for (let k = 0; k < runs; k++) {
    const t0 = performance.now();
    f();
    min = Math.min(min, performance.now() - t0);
  }
  return min;
}

const text = traceAtTheLimit();
const lines = text.split('\n').filter(Boolean);
const parsed = lines.map((l) => JSON.parse(l) as unknown);
console.log(`trace: ${text.length.toLocaleString('en-US')} characters, ${lines.length} lines`);
console.log(
  `load average: ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`
);

const jsonParse = best(5, () => lines.forEach((l) => JSON.parse(l)));
const check = best(5, () => lines.forEach((l, i) => duplicateIn(l, parsed[i])));
const search = best(5, () => lines.forEach((l) => findDuplicateMember(l)));
console.log(`JSON.parse, every line            ${jsonParse.toFixed(0).padStart(6)} ms`);
console.log(
  `duplicateIn, every line           ${check.toFixed(0).padStart(6)} ms  (${((check / jsonParse) * 100).toFixed(0)}% of JSON.parse)`
);
console.log(
  `findDuplicateMember, every line   ${search.toFixed(0).padStart(6)} ms  (${((search / jsonParse) * 100).toFixed(0)}% of JSON.parse)`
);
const whole = best(3, () => {
  const r = parseTrace(text);
  if (!r.ok) throw new Error(r.error);
});
console.log(
  `parseTrace, the whole trace       ${whole.toFixed(0).padStart(6)} ms  (the check is ${((check / whole) * 100).toFixed(0)}% of it)`
);
