/**
 * The page's what-if (trace-import.svelte.ts) against a stand-in playground: worked out after
 * the replay loads, for the lanes as loaded; an edit makes it stale until the log is replayed
 * again with the edited lanes; past the cap, the page says how to get it from the CLI.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import type { TraceEvent } from '$lib/sim/input/trace';
import { MAX_WHATIF_REQUESTS } from '../trace-import-run';
import { TraceImport } from '../trace-import.svelte';

const base = JSON.parse(readFileSync('static/scenarios/reconnect-bypass.json', 'utf8')) as Record<
  string,
  unknown
>;
const WEATHER = readFileSync('static/traces/logs/mcp-server-weather.log', 'utf8');

/** The playground as TraceImport sees it: loads are recorded, and set `scenario` and `trace`. */
function stand() {
  const loads: { data: Record<string, unknown>; trace?: TraceEvent[] }[] = [];
  const pg = {
    scenario: base as Record<string, unknown> | null,
    trace: null as TraceEvent[] | null,
    auditFocus: null,
    seed: 7,
    load(data: Record<string, unknown>, opts: { trace?: TraceEvent[] } = {}) {
      loads.push({ data, ...(opts.trace ? { trace: opts.trace } : {}) });
      pg.scenario = data;
      pg.trace = opts.trace ?? null;
      return Promise.resolve([]);
    }
  };
  return { pg, loads, logs: new TraceImport(pg as never) };
}

describe('the page’s what-if', () => {
  it('is worked out after the replay loads, and again, for the edited lanes, on request', async () => {
    const { pg, loads, logs } = stand();
    expect(await logs.importFiles([{ name: 'mcp-server-weather.log', text: WEATHER }])).toBeNull();
    expect(loads).toHaveLength(1);
    await vi.waitFor(() => expect(logs.imported!.whatIf).not.toBeNull(), { timeout: 30_000 });
    const before = logs.imported!.whatIf!.servers[0]!;
    expect([before.lanes.A.consentNow, before.lanes.B.consentNow]).toEqual([3, 2]);
    expect(logs.stale).toBe(false);

    // Lane B edited during the replay, as the page's lane form does it.
    const lanes = structuredClone(pg.scenario!.lanes) as Record<string, Record<string, unknown>>;
    lanes.B = { ...lanes.B, client: { ...(lanes.B!.client as object), store: 'connection' } };
    pg.scenario = { ...pg.scenario!, lanes };
    expect(logs.stale).toBe(true);

    expect(await logs.recompute()).toBeNull();
    // The log replayed again from its start with the lanes as they are, and the seed of the run.
    expect(loads).toHaveLength(2);
    expect(loads[1]!.data.lanes).toEqual(lanes);
    expect(loads[1]!.data.seed).toBe(7);
    expect(loads[1]!.trace).toBe(loads[0]!.trace);
    expect(logs.stale).toBe(false);
    await vi.waitFor(() => expect(logs.imported!.whatIf).not.toBeNull(), { timeout: 30_000 });
    const after = logs.imported!.whatIf!.servers[0]!;
    expect([after.lanes.A.consentNow, after.lanes.B.consentNow]).toEqual([3, 3]);
  });

  it('past the cap, says it was skipped and how to get it from lab replay', async () => {
    const { logs } = stand();
    const n = MAX_WHATIF_REQUESTS + 1;
    const t0 = Date.parse('2025-07-20T13:00:00Z');
    const lines = [
      `${new Date(t0).toISOString()} [big] [info] Message from client: {"jsonrpc":"2.0","id":0,"method":"initialize","params":{}} { metadata: undefined }`
    ];
    for (let i = 1; i <= n; i++)
      lines.push(
        `${new Date(t0 + i * 100).toISOString()} [big] [info] Message from server: {"jsonrpc":"2.0","id":${i},"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"q"}}],"maxTokens":10}} { metadata: undefined }`
      );
    expect(
      await logs.importFiles([{ name: 'mcp-server-big.log', text: lines.join('\n') }])
    ).toBeNull();
    await vi.waitFor(() => expect(logs.imported!.note).not.toBe(''), { timeout: 30_000 });
    expect(logs.imported!.whatIf).toBeNull();
    expect(logs.imported!.note).toBe(
      'What-if skipped: 20,001 sampling requests > 20,000, more than the page works out in reasonable time and memory (it replays the log all the same). For the table: download the scenario (below), then run lab import on your log files with --out trace.jsonl, and lab replay trace.jsonl --scenario <the scenario file> --out whatif/ (whatif.json and whatif.csv, at any size).'
    );
  });
});
