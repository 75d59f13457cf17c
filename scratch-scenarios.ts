import { readFileSync } from 'node:fs';
import { parseScenario } from './src/lib/sim/scenario';
import { Simulation, type FrameLine } from './src/lib/sim/engine';
const show = process.env.SHOW; // optional server-name prefix to dump frames
const keys = process.env.KEYS?.split(',');
for (const file of process.argv.slice(2)) {
  const r = parseScenario(readFileSync(file, 'utf8'));
  if (!r.ok) { console.error(r.errors); process.exit(2); }
  const seeds = process.env.SEEDS ? process.env.SEEDS.split(',').map(Number) : [undefined];
  for (const seed of seeds) for (let rep = 0; rep < Number(process.env.REPEAT ?? 1); rep++) {
    let frames = 0;
    const dump: FrameLine[] = [];
    const audits: unknown[] = [];
    const per: Record<string, Record<string, number>> = {};
    const t0 = performance.now();
    const sim = new Simulation(r.scenario, { ...(seed !== undefined ? { seed } : {}),
      onFrame: (l) => { frames++; if (show && l.server.startsWith(show) && dump.length < Number(process.env.N ?? 40)) dump.push(l); },
      onAudit: (a) => {
        const k = `${a.lane} ${a.server.replace(/-\d+$/, '')}`;
        const v = (per[k] ??= { req: 0, fresh: 0, replays: 0, prompts: 0, calls: 0, micros: 0, approved: 0 });
        v.req++; if (a.replayed) v.replays++; else v.fresh++; if (a.consentShown) v.prompts++;
        if (a.tokensIn > 0) v.calls++; v.micros += Math.round(Number(a.cost) * 1e6); if (a.consent === 'approved') v.approved++; if (show && a.server.startsWith(show) && audits.length < 20) audits.push(a); }
    });
    sim.runToEnd();
    console.log(file, 'seed', seed, 'wall ms', (performance.now() - t0).toFixed(0), 'frames', frames);
    if (rep > 0) continue;
    for (const id of ['A', 'B'] as const) {
      const L = sim.lanes[id];
      const c = L.metrics.counters as unknown as Record<string, unknown>;
      const o = keys ? Object.fromEntries(keys.map((k) => [k, c[k]])) : c;
      console.log(id, JSON.stringify(o), 'user', JSON.stringify(L.userStats), 'prov', JSON.stringify(L.providerStats));
    }
    if (process.env.PER) for (const [k, v] of Object.entries(per).sort()) console.log('  ', k, JSON.stringify(v));
    if (show) { for (const d of dump) console.log(JSON.stringify(d)); if (process.env.AUDIT) for (const a of audits) console.log(JSON.stringify(a)); }
  }
}
