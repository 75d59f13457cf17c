import { describe, expect, it } from 'vitest';
import { auditFileName, safePart } from './download-name';

describe('downloaded audit logs are named from the scenario and the filter', () => {
  it('names the scenario and each filter set', () => {
    expect(auditFileName('reconnect-bypass', {}, 'csv')).toBe('reconnect-bypass-audit.csv');
    expect(auditFileName('reconnect-bypass', { lane: 'B', reason: 'user.denied' }, 'csv')).toBe(
      'reconnect-bypass-audit-laneB-user.denied.csv'
    );
    expect(
      auditFileName('tired-user', { fromMin: 10, toMin: 20, outcome: 'denied' }, 'jsonl')
    ).toBe('tired-user-audit-denied-min10-20.jsonl');
  });

  it('keeps only safe characters: a name from a file or a link is anyone’s text', () => {
    expect(safePart('../../etc/passwd')).toBe('etc-passwd');
    expect(safePart('a b/c\\d:e*?"<>|')).toBe('a-b-c-d-e');
    expect(auditFileName('', { server: 'ëvil server' }, 'csv')).toBe(
      'scenario-audit-vil-server.csv'
    );
    expect(auditFileName('x'.repeat(100), {}, 'csv')).toBe(`${'x'.repeat(40)}-audit.csv`);
  });
});
