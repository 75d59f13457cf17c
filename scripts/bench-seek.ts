/**
 * `npx tsx scripts/bench-seek.ts [SCENARIO.json ...]`: the cost of seeking a run (issue #10).
 *
 * For each scenario (default: a simulated day of bench/retry-storm.json and the 1 h
 * reconnect-bypass scenario):
 * - the run with view checkpoints at every metrics sample, and what they cost in memory;
 * - seeking the page's view to an arbitrary time: a lookup among the checkpoints;
 * - restoring the engine to a time from its engine checkpoints (engine-checkpoints.ts), as the
 *   playground does: seeks back and forth to arbitrary times after playing the run to its end;
 * - restoring it by deterministic re-simulation instead (checkpoint.ts), at a quarter, half,
 *   three quarters and the end of the run: its cost is the run up to t.
 *
 * Figures, not assertions: run it on a quiet machine and read them.
 */
import { readFileSync } from 'node:fs';
import { CheckpointRecorder, replayTo } from '../src/lib/sim/engine/checkpoint';
import { Simulation } from '../src/lib/sim/engine/engine';
import { parseScenario } from '../src/lib/sim/input/scenario';
import { Session } from '../src/lib/sim/session/session';
import { loadParsers } from '../src/lib/sim/input/parsers';

// The session takes its parsers and frame checks from here once loaded (the worker loads them on
// first use).
await loadParsers();

const files = process.argv.slice(2);
const targets = files.length
  ? files
  : ['bench/retry-storm.json', 'static/scenarios/reconnect-bypass.json'];
const gc = (globalThis as { gc?: () => void }).gc;

function heap(): number {
  gc?.();
  return process.memoryUsage().heapUsed;
}

for (const file of targets) {
  const parsed = parseScenario(readFileSync(file, 'utf8'));
  if (!parsed.ok) {
    console.error(`${file}: ${parsed.errors[0]?.path}: ${parsed.errors[0]?.message}`);
    process.exit(2);
  }
  const scenario = parsed.scenario;
  const hours = scenario.durationMs / 3_600_000;
  console.log(`\n${file}: ${hours} h simulated, a sample every ${scenario.sampleMs / 1000} s`);

  const rec = new CheckpointRecorder();
  const t0 = performance.now();
  const sim = rec.attach(new Simulation(scenario, rec.options()));
  sim.runToEnd();
  const runMs = performance.now() - t0;
  const cps = rec.checkpoints;
  console.log(`  run with checkpoints: ${(runMs / 1000).toFixed(1)} s, ${sim.events} events`);

  // Memory: the checkpoints' JSON, and the heap a structured copy of them takes.
  const json = JSON.stringify(cps).length;
  const COPIES = 20;
  const before = heap();
  const copies = Array.from({ length: COPIES }, () => structuredClone(cps));
  const after = heap();
  console.log(
    `  checkpoints: ${cps.length}, ${(json / 1024).toFixed(0)} KiB as JSON (${(json / cps.length / 1024).toFixed(1)} KiB each)` +
      (gc
        ? `, ${((after - before) / COPIES / 1024).toFixed(0)} KiB of heap`
        : ' (heap: run node with --expose-gc)')
  );
  void copies.length;

  // View seek: 10,000 arbitrary times (a fixed LCG, so the figure is repeatable).
  let x = 12345;
  const times: number[] = [];
  for (let i = 0; i < 10_000; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    times.push(scenario.start + (x / 2 ** 32) * scenario.durationMs);
  }
  const s0 = performance.now();
  let found = 0;
  for (const t of times) if (rec.at(t)) found++;
  const seekUs = ((performance.now() - s0) * 1000) / times.length;
  console.log(
    `  view seek to an arbitrary time: ${seekUs.toFixed(2)} µs (${found} of ${times.length} found)`
  );

  // Engine restore from engine checkpoints (engine-checkpoints.ts), as the playground's worker
  // does: play the run to its end through a session (checkpoints taken on the way), then seek
  // back to arbitrary times. Each seek copies the last checkpoint before t and runs on to t.
  {
    const session = new Session();
    const text = readFileSync(file, 'utf8');
    session.handle({ type: 'load', scenario: JSON.parse(text) as unknown });
    const p0 = performance.now();
    session.handle({ type: 'seek', t: scenario.start + scenario.durationMs });
    const playMs = performance.now() - p0;
    const cps = session.engineCheckpoints;
    console.log(
      `  played to the end through a session: ${(playMs / 1000).toFixed(1)} s, ${cps.list.length} engine checkpoints` +
        ` (every ${cps.everyEvents.toLocaleString('en')} events)`
    );
    // Back from the end to a quarter, a half, three quarters: the end is reached between them by
    // running (a seek forward runs the run there; only a seek back can restore).
    const back: number[] = [];
    for (const q of [0.25, 0.5, 0.75]) {
      session.handle({ type: 'seek', t: scenario.start + scenario.durationMs });
      const t = scenario.start + Math.round(q * scenario.durationMs) - 1;
      const s0 = performance.now();
      const c0 = process.cpuUsage();
      session.handle({ type: 'seek', t });
      const ms = performance.now() - s0;
      // The process's CPU time too: on a shared machine the wall time includes waiting for a core.
      const cpu = process.cpuUsage(c0);
      back.push(ms);
      console.log(
        `  seek back from the end to ${q * 100}% (${(q * hours).toFixed(2)} h): ${(ms / 1000).toFixed(3)} s` +
          ` (CPU ${((cpu.user + cpu.system) / 1e6).toFixed(3)} s)`
      );
    }
    // Then scrubbing: 24 seeks to arbitrary times from wherever the last one left the run.
    let y = 987654;
    for (let i = 0; i < 24; i++) {
      y = (Math.imul(y, 1103515245) + 12345) >>> 0;
      const t = scenario.start + Math.floor((y / 2 ** 32) * scenario.durationMs);
      if (t >= session.sim!.now) continue; // forward: the run runs there
      const s0 = performance.now();
      session.handle({ type: 'seek', t });
      back.push(performance.now() - s0);
    }
    back.sort((a, b) => a - b);
    const at = (f: number) => back[Math.min(back.length - 1, Math.floor(f * back.length))]!;
    console.log(
      `  ${back.length} seeks back: median ${(at(0.5) / 1000).toFixed(3)} s, 90th percentile ${(at(0.9) / 1000).toFixed(3)} s, slowest ${(back.at(-1)! / 1000).toFixed(3)} s; ${session.copyRestores} restored from a checkpoint`
    );
    // What the checkpoints hold: the heap with them, less the heap once they are dropped.
    const m = cps.list.length;
    const withThem = heap();
    cps.clear();
    const held = withThem - heap();
    if (gc && m)
      console.log(
        `  engine checkpoints in memory: ${m}, ${(held / 1048576).toFixed(1)} MiB of heap (${(held / m / 1048576).toFixed(2)} MiB each)`
      );
  }

  // Engine restore by re-simulation (what a seek costs without checkpoints, and before the first).
  for (const q of [0.25, 0.5, 0.75, 1]) {
    const t = scenario.start + Math.round(q * scenario.durationMs);
    const r0 = performance.now();
    replayTo(scenario, {}, [], { t });
    const ms = performance.now() - r0;
    console.log(
      `  engine restore to ${q * 100}% (${(q * hours).toFixed(2)} h): ${(ms / 1000).toFixed(2)} s`
    );
  }
}
