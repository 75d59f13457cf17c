/**
 * A what-if report (whatif.ts) in words: the CSV `lab replay --out` writes (whatif.csv) and the
 * table it prints. Apart from the collector so that counting and wording can be read on their own.
 */
import { csvCell } from '../../store/audit-export';
import { LANE_IDS } from '../input/scenario';
import type { WhatIfCounts, WhatIfReport } from './whatif';

/** The CSV columns of {@link whatIfCsv}: one row per lane and server, then each lane's total. */
export const WHATIF_CSV_COLUMNS = [
  'lane',
  'server',
  'requests',
  'then_served',
  'then_refused',
  'then_no_answer',
  'now_served',
  'now_refused',
  'now_undecided',
  'served_then_refused_now',
  'refused_now_by',
  'refused_then_served_now',
  'served_now_after',
  'no_answer_then_served_now',
  'no_answer_then_refused_now',
  'consent_then',
  'consent_now',
  'spend_then',
  'spend_now',
  'currency',
  'alerts_then',
  'alerts_now'
] as const;

const byText = (m: Record<string, number>) =>
  Object.entries(m)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([k, n]) => `${k}=${n}`)
    .join('; ');

/** RFC 4180 CSV (CRLF), cells guarded against formula injection as the audit export's are. */
export function whatIfCsv(r: WhatIfReport): string {
  const rows: string[] = [WHATIF_CSV_COLUMNS.join(',')];
  for (const lane of LANE_IDS) {
    for (const [server, c] of [
      ...r.servers.map((s) => [s.server, s] as const),
      ['(total)', r.total] as const
    ]) {
      const l = c.lanes[lane];
      rows.push(
        [
          lane,
          server,
          c.requests,
          c.then.served,
          c.then.refused,
          c.then.none,
          l.served,
          l.refused,
          l.undecided,
          l.servedThenRefusedNow,
          byText(l.refusedNowBy),
          l.refusedThenServedNow,
          byText(l.servedNowAfter),
          l.noneThen.served,
          l.noneThen.refused,
          c.consentThen,
          l.consentNow,
          c.spendThen,
          l.spendNow,
          r.currency,
          c.alertsThen,
          l.alertsNow
        ]
          .map((v) => csvCell(v))
          .join(',')
      );
    }
  }
  return rows.join('\r\n') + '\r\n';
}

/** The report as text: a table per server and the total, the log's column beside each lane's. */
export function whatIfText(r: WhatIfReport): string {
  const rows: string[][] = [['', 'the log', `A: ${r.labels.A}`, `B: ${r.labels.B}`]];
  const known = (v: number | string | null) => (v === null ? '?' : String(v));
  const group = (name: string, c: WhatIfCounts) => {
    const [a, b] = [c.lanes.A, c.lanes.B];
    rows.push([name, '', '', '']);
    rows.push(['  sampling requests', String(c.requests), '', '']);
    rows.push(['  served', String(c.then.served), String(a.served), String(b.served)]);
    rows.push(['  refused', String(c.then.refused), String(a.refused), String(b.refused)]);
    if (c.then.none) rows.push(['  no answer logged', String(c.then.none), '', '']);
    if (a.undecided || b.undecided)
      rows.push(['  not decided (past the end)', '', String(a.undecided), String(b.undecided)]);
    rows.push([
      '  served then, refused now',
      '',
      String(a.servedThenRefusedNow),
      String(b.servedThenRefusedNow)
    ]);
    for (const reason of new Set([...Object.keys(a.refusedNowBy), ...Object.keys(b.refusedNowBy)]))
      rows.push([
        `    by ${reason}`,
        '',
        String(a.refusedNowBy[reason] ?? 0),
        String(b.refusedNowBy[reason] ?? 0)
      ]);
    rows.push([
      '  refused then, served now',
      '',
      String(a.refusedThenServedNow),
      String(b.refusedThenServedNow)
    ]);
    for (const label of new Set([
      ...Object.keys(a.servedNowAfter),
      ...Object.keys(b.servedNowAfter)
    ]))
      rows.push([
        `    after ${label}`,
        '',
        String(a.servedNowAfter[label] ?? 0),
        String(b.servedNowAfter[label] ?? 0)
      ]);
    if (c.then.none)
      rows.push([
        '  no answer then: served / refused now',
        '',
        `${a.noneThen.served} / ${a.noneThen.refused}`,
        `${b.noneThen.served} / ${b.noneThen.refused}`
      ]);
    rows.push([
      '  consent dialogs',
      known(c.consentThen),
      String(a.consentNow),
      String(b.consentNow)
    ]);
    rows.push([`  spend (${r.currency})`, known(c.spendThen), a.spendNow, b.spendNow]);
    rows.push([
      '  retry-loop alerts',
      known(c.alertsThen),
      String(a.alertsNow),
      String(b.alertsNow)
    ]);
  };
  for (const s of r.servers) group(s.server, s);
  if (r.servers.length > 1) group('total', r.total);
  const w = [0, 1, 2, 3].map((i) => Math.max(...rows.map((row) => row[i]!.length)));
  const table = rows
    .map((row) =>
      row
        .map((c, i) => (i === 0 ? c.padEnd(w[0]!) : c.padStart(w[i]!)))
        .join('  ')
        .trimEnd()
    )
    .join('\n');
  return (
    'what the policy would have done (the log beside each lane; ? = the log does not say)\n' +
    table +
    `\n${r.changed} request${r.changed === 1 ? '' : 's'} changed outcome in a lane`
  );
}
