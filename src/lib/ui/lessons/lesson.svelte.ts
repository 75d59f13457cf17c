/**
 * One lesson in front of a room: its scenario in the playground's own worker and state
 * (`Playground`), played at the lesson's pace, the baseline run Explain quotes, the Try run, the
 * learner's prediction and this browser's progress. Components render this; they never talk to
 * the worker directly.
 */
import { mergePatch, type Answer, type LessonData } from '$lib/sim/input/lessons';
import { Playground } from '../playground.svelte';
import { encodeScenarioHash } from '../share';
import { paceSpeed } from './presenter';
import { ProgressStore, type LessonResult } from './progress';

export type ScenarioFetch = (name: string) => Promise<Record<string, unknown>>;

export class LessonSession {
  readonly pg = new Playground();
  readonly progress: ProgressStore;
  lesson = $state.raw<LessonData | null>(null);
  /** The scenario as the lesson's file gives it (Try patches a copy). */
  scenario = $state.raw<Record<string, unknown> | null>(null);
  /** The worker is running the Try change rather than the lesson's own scenario. */
  tried = $state(false);
  /** The lesson's own run, finished: Explain quotes it and the handout prints it. */
  baseline = $state.raw<LessonResult | null>(null);
  answer = $state.raw<Answer | undefined>(undefined);
  completed = $state(false);
  error = $state('');
  #started: Promise<void> | null = null;

  constructor(progress = new ProgressStore()) {
    this.progress = progress;
  }

  /** The current run, finished, as a result; null while it is still running. */
  get result(): LessonResult | null {
    const s = this.pg.snapshot;
    if (!s?.done) return null;
    return {
      lanes: { A: s.lanes.A.counters, B: s.lanes.B.counters },
      series: { A: s.lanes.A.series, B: s.lanes.B.series },
      labels: { A: s.lanes.A.label, B: s.lanes.B.label },
      start: s.start,
      now: s.now,
      marks: s.marks
    };
  }

  /**
   * The opening in progress or done, by lesson: a step entered while its lesson is still loading
   * waits for that load. Without it, Run's autoplay could be sent before the scenario reached the
   * worker (the Predict step's opening still under way), and the load then left the run paused.
   */
  #opening: { name: string; done: Promise<void> } | null = null;

  /** Open `lesson` (a no-op when it is already open): fetch its scenario and load it. */
  open(lesson: LessonData, fetchScenario: ScenarioFetch): Promise<void> {
    if (this.#opening?.name === lesson.name) return this.#opening.done;
    const done = this.#open(lesson, fetchScenario).finally(() => {
      // A failed opening (its scenario not fetched or not valid) is tried again by the next step.
      if (this.error !== '' && this.#opening?.done === done) this.#opening = null;
    });
    this.#opening = { name: lesson.name, done };
    return done;
  }

  async #open(lesson: LessonData, fetchScenario: ScenarioFetch): Promise<void> {
    this.#started ??= this.pg.start();
    await this.#started;
    if (this.lesson?.name === lesson.name && this.scenario) return;
    this.lesson = lesson;
    this.baseline = null;
    this.error = '';
    try {
      this.scenario = await fetchScenario(lesson.scenario);
    } catch (e) {
      this.error = `Could not load the scenario '${lesson.scenario}': ${(e as Error).message}`;
      return;
    }
    const p = await this.progress.get(lesson.name);
    this.answer = p.answer;
    this.completed = p.completed === true;
    await this.load(false);
  }

  /** Load the lesson's scenario afresh, or with the Try change applied; paused at the start. */
  async load(tried: boolean): Promise<void> {
    const lesson = this.lesson;
    if (!lesson || !this.scenario) return;
    const data = (tried ? mergePatch(this.scenario, lesson.try.patch) : this.scenario) as Record<
      string,
      unknown
    >;
    const errors = await this.pg.load(data);
    if (errors.length) {
      this.error = `${lesson.scenario}: ${errors[0]!.path}: ${errors[0]!.message}`;
      return;
    }
    this.tried = tried;
    const duration = typeof data.durationMs === 'number' ? data.durationMs : 3_600_000;
    this.pg.speed = paceSpeed(duration, lesson.runSeconds);
  }

  /** Keep the finished lesson run as the baseline (called whenever a snapshot arrives). */
  capture(): void {
    if (this.tried || this.baseline) return;
    const r = this.result;
    if (r) this.baseline = r;
  }

  /** Run what is left of the current run at once (the presenter skips ahead). */
  finish(): void {
    const s = this.pg.snapshot;
    if (!s || s.done || this.pg.ff) return;
    // A second over the remainder: the session clamps to the end, so float rounding cannot stop short.
    this.pg.fastForward((s.end - s.now + 1000) / 3_600_000);
  }

  /** Make sure the baseline exists: reload the lesson's own scenario if Try replaced it, finish it. */
  async ensureBaseline(): Promise<void> {
    if (this.baseline) return;
    if (this.tried) await this.load(false);
    this.finish();
  }

  async commit(answer: Answer): Promise<void> {
    if (!this.lesson) return;
    // Shown as committed only once it is stored: a reload right after must not lose it.
    try {
      await this.progress.update(this.lesson.name, { answer });
    } catch (e) {
      this.error = `This browser could not store the prediction (${(e as Error).message}); it is kept until the page closes.`;
    }
    this.answer = answer;
  }

  async complete(): Promise<void> {
    if (!this.lesson || !this.baseline || this.completed) return;
    this.completed = true;
    try {
      await this.progress.update(this.lesson.name, { completed: true, result: this.baseline });
    } catch (e) {
      this.error = `This browser could not record the lesson as completed (${(e as Error).message}).`;
    }
  }

  /** The scenario now in the worker (Try change included), as a playground share hash. */
  playgroundHash(): string {
    if (!this.scenario || !this.lesson) return '';
    const data = this.tried ? mergePatch(this.scenario, this.lesson.try.patch) : this.scenario;
    return encodeScenarioHash(data);
  }

  stop(): void {
    this.pg.stop();
  }
}
