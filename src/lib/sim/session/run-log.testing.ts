/**
 * For tests: a real run's audit log (both lanes, several servers, outcomes and reasons), the
 * first `minutes` of a ready-made scenario, so index and query tests check real records.
 */
import { readFileSync } from 'node:fs';
import type { AuditRecord } from '../../machine/types';
import { Session } from './session';

export function runLog(file: string, minutes: number): AuditRecord[] {
  const scenario = JSON.parse(readFileSync(`static/scenarios/${file}`, 'utf8')) as unknown;
  const s = new Session();
  const [l] = s.handle({ type: 'load', scenario });
  if (l?.type !== 'loaded' || !l.ok) throw new Error('not loaded');
  const out: AuditRecord[] = [];
  for (const r of s.handle({ type: 'advance', to: l.start + minutes * 60_000 }))
    if (r.type === 'snapshot') out.push(...r.audit);
  return out;
}
