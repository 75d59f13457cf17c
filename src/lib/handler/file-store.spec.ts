/**
 * fileStore: what a restarted client finds on disk. A restart is a new store on the same
 * directory after the old one closed (or its process died); the shared store contract runs on it
 * too (store/decision-store.spec.ts).
 */
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { StoredDecision } from '../machine/types';
import { DECISIONS_FILE, fileStore, LOCK_FILE, type FileDecisionStore } from './file-store';

const dirs: string[] = [];
function freshDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'file-store-'));
  dirs.push(d);
  return d;
}

function decision(over: Partial<StoredDecision> = {}): StoredDecision {
  return {
    server: 'everything',
    identity: 'everything:0123',
    verdict: 'denied',
    reason: 'user.denied',
    retryable: false,
    decidedAt: 1_000,
    expiresAt: null,
    policyHash: 'h1',
    represented: 0,
    recent: [],
    ...over
  };
}

/** A store whose warnings are collected rather than printed. */
function open(dir: string, warnings: string[] = []): FileDecisionStore {
  return fileStore(dir, { onWarning: (m) => warnings.push(m) });
}

async function restart(s: FileDecisionStore, dir: string, warnings?: string[]) {
  await s.close();
  return open(dir, warnings);
}

describe('fileStore', () => {
  it('a decision survives a restart: the new store answers it, with its count of re-presentations', async () => {
    const dir = freshDir();
    let s = open(dir);
    await s.commit('everything#1', decision());
    expect(s.lookup('everything', 'everything#1', 'everything:0123', 'h1', 2_000)).not.toBeNull();
    s = await restart(s, dir);
    // Another connection of the same server, another process: the same answer.
    const hit = s.lookup('everything', 'everything#7', 'everything:0123', 'h1', 3_000);
    expect(hit?.decision).toMatchObject({ verdict: 'denied', reason: 'user.denied' });
    expect(hit?.decision.represented).toBe(2);
    await s.close();
  });

  it('TTLs hold across a restart: a rate-limit denial is dead at its expiry, the approval under it answers', async () => {
    const dir = freshDir();
    let s = open(dir);
    await s.commit(
      'c',
      decision({
        identity: 'rated',
        reason: 'policy.rate_limit',
        retryable: true,
        decidedAt: 9_000,
        expiresAt: 69_000,
        approval: { decidedAt: 2_000, expiresAt: 900_000 }
      })
    );
    await s.commit('c', decision({ identity: 'short', expiresAt: 5_000 }));
    s = await restart(s, dir);
    expect(s.lookup('everything', 'c', 'short', 'h1', 5_000)).toBeNull();
    expect(s.lookup('everything', 'c', 'rated', 'h1', 68_999)?.decision.verdict).toBe('denied');
    expect(s.lookup('everything', 'c', 'rated', 'h1', 69_000)?.decision).toMatchObject({
      verdict: 'allowed',
      decidedAt: 2_000,
      expiresAt: 900_000
    });
    s = await restart(s, dir);
    expect(s.lookup('everything', 'c', 'rated', 'h1', 70_000)?.decision.verdict).toBe('allowed');
    expect(s.lookup('everything', 'c', 'rated', 'h1', 900_000)).toBeNull();
    await s.close();
  });

  it('a policy edit invalidates: another hash drops the entry for good, invalidateServer drops the server', async () => {
    const dir = freshDir();
    let s = open(dir);
    await s.commit('c', decision({ identity: 'a' }));
    await s.commit('c', decision({ identity: 'b' }));
    await s.commit('c', decision({ server: 'other', identity: 'o' }));
    // A client restarted with an edited policy: the old decision is not an answer.
    s = await restart(s, dir);
    expect(s.lookup('everything', 'c', 'a', 'h2', 2_000)).toBeNull();
    // Back to the old policy: still gone (the drop was written).
    s = await restart(s, dir);
    expect(s.lookup('everything', 'c', 'a', 'h1', 2_000)).toBeNull();
    expect(await s.invalidateServer('everything')).toBe(1);
    s = await restart(s, dir);
    expect(s.entries().map((d) => d.identity)).toEqual(['o']);
    expect(await s.clear()).toBe(1);
    s = await restart(s, dir);
    expect(s.count()).toBe(0);
    await s.close();
  });

  it('concurrent commits are grouped, and every one acknowledged is on disk', async () => {
    const dir = freshDir();
    let s = open(dir);
    await Promise.all(
      Array.from({ length: 300 }, (_, i) => s.commit('c', decision({ identity: `id-${i}` })))
    );
    s = await restart(s, dir);
    expect(s.count()).toBe(300);
    await s.close();
  });

  it('compacts a long log into one line per decision, atomically, and reads it back', async () => {
    const dir = freshDir();
    let s = open(dir);
    for (let i = 0; i < 1_200; i++)
      await s.commit('c', decision({ identity: `id-${i % 3}`, decidedAt: i }));
    await s.flush();
    const lines = readFileSync(join(dir, DECISIONS_FILE), 'utf8').trimEnd().split('\n');
    expect(lines.length).toBeLessThan(300);
    s = await restart(s, dir);
    expect(s.count()).toBe(3);
    expect(s.lookup('everything', 'c', 'id-2', 'h1', 5_000)?.decision.decidedAt).toBe(1_199);
    await s.close();
  });

  it('a torn last line (a crash mid-write) is dropped with a warning; every earlier decision stays', async () => {
    const dir = freshDir();
    let s = open(dir);
    await s.commit('c', decision({ identity: 'kept' }));
    await s.close();
    const file = join(dir, DECISIONS_FILE);
    appendFileSync(file, '{"put":{"server":"everything","ident');
    const warnings: string[] = [];
    s = open(dir, warnings);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`${file}:3: dropped a torn last line`);
    expect(s.entries().map((d) => d.identity)).toEqual(['kept']);
    // The torn bytes are cut, so the next append starts on a line of its own.
    await s.commit('c', decision({ identity: 'next' }));
    s = await restart(s, dir);
    expect(
      s
        .entries()
        .map((d) => d.identity)
        .sort()
    ).toEqual(['kept', 'next']);
    await s.close();
  });

  const damaged: [string, (file: string) => void, RegExp][] = [
    [
      'a line that is not JSON',
      (f) => appendFileSync(f, 'not json\n'),
      /decisions\.jsonl:3: not JSON/
    ],
    [
      'a record failing validation',
      (f) => appendFileSync(f, '{"put":{"server":"everything","verdict":"maybe"}}\n'),
      /decisions\.jsonl:3: put: not a stored decision/
    ],
    [
      'an unknown change',
      (f) => appendFileSync(f, '{"rename":"x"}\n'),
      /decisions\.jsonl:3: unknown change 'rename'/
    ],
    [
      'another version',
      (f) =>
        writeFileSync(f, readFileSync(f, 'utf8').replace('"version":1', '"version":9'), 'utf8'),
      /decisions\.jsonl:1: version 9 is not 1/
    ],
    [
      'not a decisions log',
      (f) => writeFileSync(f, '{"hello":"world"}\n', 'utf8'),
      /decisions\.jsonl:1: not a decisions log/
    ]
  ];

  it.each(damaged)(
    'refuses a damaged file (%s), naming file and line, and leaves it untouched',
    async (_what, damage, message) => {
      const dir = freshDir();
      const s = open(dir);
      await s.commit('c', decision());
      await s.close();
      const file = join(dir, DECISIONS_FILE);
      damage(file);
      const before = readFileSync(file);
      expect(() => open(dir)).toThrow(message);
      expect(readFileSync(file).equals(before)).toBe(true);
      // The refused open released the lock: fixing the file is all it takes.
      writeFileSync(file, readFileSync(file, 'utf8').split('\n').slice(0, 2).join('\n') + '\n');
      if (!/:1: /.test(message.source)) {
        const again = open(dir);
        expect(again.count()).toBe(1);
        await again.close();
      }
    }
  );

  it('one store per directory: a second is refused while the first is open; a dead owner’s lock is taken over', async () => {
    const dir = freshDir();
    const s = open(dir);
    expect(() => open(dir)).toThrow(/decisions\.lock is held by another store in this process/);
    await s.close();
    const again = open(dir);
    await again.close();
    // A process id that cannot be alive (above Linux's pid_max): its lock is stale.
    writeFileSync(join(dir, LOCK_FILE), '4194999\n');
    const taken = open(dir);
    expect(readFileSync(join(dir, LOCK_FILE), 'utf8').trim()).toBe(String(process.pid));
    await taken.close();
  });

  it('a closed store refuses commits rather than pretend they were stored', async () => {
    const s = open(freshDir());
    await s.close();
    await expect(s.commit('c', decision())).rejects.toThrow(/is closed/);
  });
});
