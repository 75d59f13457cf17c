/**
 * The lesson state class against the real session, in process: a fake worker hands each command
 * to a `Session` (what the worker runs) and posts its replies back, so a lesson's baseline, Try
 * run and progress are checked against a Node run of the same scenario without a browser.
 */
import 'fake-indexeddb/auto';
import { readFileSync } from 'node:fs';
import { createStore } from 'idb-keyval';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { Simulation } from '$lib/sim/engine/engine';
import { fillTemplate, mergePatch, parseLesson, type LessonData } from '$lib/sim/input/lessons';
import type { WorkerReply, WorkerRequest } from '$lib/sim/session/protocol';
import { parseScenario } from '$lib/sim/input/scenario';
import { Session } from '$lib/sim/session/session';
import { SimClient } from '../worker/client';
import { LessonSession } from './lesson.svelte';
import { ProgressStore } from './progress';

function fakeWorker(): Worker {
  const session = new Session();
  const w = {
    onmessage: null as ((e: MessageEvent<WorkerReply>) => void) | null,
    postMessage({ id, cmd }: WorkerRequest) {
      setTimeout(() => {
        const replies = session.handle(cmd);
        while (session.fastForwarding) replies.push(...session.fastForwardSlice());
        for (const reply of replies)
          w.onmessage?.({ data: { re: id, reply } } as MessageEvent<WorkerReply>);
      });
    },
    terminate() {}
  };
  return w as unknown as Worker;
}

function lessonFile(name: string): LessonData {
  const r = parseLesson(readFileSync(`static/lessons/${name}.json`, 'utf8'));
  if (!r.ok) throw new Error(r.errors[0]!.message);
  return r.lesson;
}

function scenarioData(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(`static/scenarios/${name}.json`, 'utf8')) as Record<
    string,
    unknown
  >;
}

function nodeRun(data: unknown) {
  const p = parseScenario(data);
  if (!p.ok) throw new Error(p.errors[0]!.message);
  const sim = new Simulation(p.scenario);
  sim.runToEnd();
  return { A: sim.lanes.A.metrics.counters, B: sim.lanes.B.metrics.counters };
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && !check(); i++) await new Promise((r) => setTimeout(r, 1));
  expect(check()).toBe(true);
}

beforeAll(() => {
  vi.stubGlobal('cancelAnimationFrame', () => {});
  vi.spyOn(SimClient, 'start').mockImplementation(async () => new SimClient(fakeWorker()));
});

describe('LessonSession', () => {
  const lesson = lessonFile('reconnect-bypass');
  let db = 0;
  const fresh = () =>
    new LessonSession(new ProgressStore(createStore(`lesson-spec-${++db}`, 'progress')));

  it('opens paused at the start, at the lesson pace', async () => {
    const s = fresh();
    await s.open(lesson, async (n) => scenarioData(n));
    expect(s.pg.snapshot?.now).toBe(s.pg.snapshot?.start);
    expect(s.pg.playing).toBe(false);
    expect(s.pg.speed).toBe(Math.round(3_600_000 / (lesson.runSeconds * 1000)));
    s.stop();
  });

  it('keeps the finished run as the baseline: the numbers of the same run in Node', async () => {
    const s = fresh();
    await s.open(lesson, async (n) => scenarioData(n));
    await s.ensureBaseline();
    await until(() => s.pg.snapshot?.done === true);
    s.capture();
    const node = nodeRun(scenarioData('reconnect-bypass'));
    expect(s.baseline?.lanes).toEqual(node);
    expect(fillTemplate(lesson.explain, s.baseline!.lanes)).toBe(
      fillTemplate(lesson.explain, node)
    );
    s.stop();
  });

  it('Try runs the patched scenario and leaves the baseline alone', async () => {
    const s = fresh();
    await s.open(lesson, async (n) => scenarioData(n));
    s.finish();
    await until(() => s.pg.snapshot?.done === true);
    s.capture();
    const baseline = s.baseline;
    await s.load(true);
    expect(s.tried).toBe(true);
    s.finish();
    await until(() => s.pg.snapshot?.done === true);
    s.capture();
    expect(s.baseline).toBe(baseline);
    expect(s.result?.lanes).toEqual(
      nodeRun(mergePatch(scenarioData('reconnect-bypass'), lesson.try.patch))
    );
    expect(s.playgroundHash()).toMatch(/^#s=/);
    s.stop();
  });

  it('stores the prediction and the completed run in IndexedDB', async () => {
    const store = new ProgressStore(createStore('lesson-spec-progress', 'progress'));
    const s = new LessonSession(store);
    await s.open(lesson, async (n) => scenarioData(n));
    await s.commit(42);
    expect(s.answer).toBe(42);
    await s.ensureBaseline();
    await until(() => s.pg.snapshot?.done === true);
    s.capture();
    await s.complete();
    const p = await store.get(lesson.name);
    expect(p.answer).toBe(42);
    expect(p.completed).toBe(true);
    expect(p.result?.lanes.A.consentPrompts).toBe(s.baseline?.lanes.A.consentPrompts);
    // A second session (a reload) reads them back.
    const again = new LessonSession(store);
    await again.open(lesson, async (n) => scenarioData(n));
    expect(again.answer).toBe(42);
    expect(again.completed).toBe(true);
    s.stop();
    again.stop();
  });

  it('says so when the scenario cannot be fetched', async () => {
    const s = fresh();
    await s.open(lesson, async () => {
      throw new Error('HTTP 404');
    });
    expect(s.error).toBe("Could not load the scenario 'reconnect-bypass': HTTP 404");
    s.stop();
  });
});
