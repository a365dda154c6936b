// A vitest reporter, next to the default one (vitest.config.ts): when the run ends it prints one
// line per project — its wall time, from the start of its first test file to the end of its last
// (hooks included), and its files and tests — and the seed of the shuffled order, so CI's log of
// `npm test` says where the time went and how to replay the order that failed.
import type { Reporter, TestModule, Vitest } from 'vitest/node';

export type TestState = 'passed' | 'failed' | 'skipped' | 'pending';

export interface ProjectTally {
  project: string;
  /** Wall clock (ms) when its first file started and its last one ended; NaN when none ran. */
  startMs: number;
  endMs: number;
  files: number;
  tests: Record<TestState, number>;
}

/** A file of the run as the tally needs it: its project, when it ran, and its tests' states. */
export interface FileRun {
  project: string;
  startMs?: number;
  endMs?: number;
  states: readonly TestState[];
}

/** Per project, in the order the projects first appear. */
export function tallyProjects(files: readonly FileRun[]): ProjectTally[] {
  const out = new Map<string, ProjectTally>();
  for (const f of files) {
    let t = out.get(f.project);
    if (!t) {
      t = { project: f.project, startMs: NaN, endMs: NaN, files: 0, tests: { passed: 0, failed: 0, skipped: 0, pending: 0 } };
      out.set(f.project, t);
    }
    t.files++;
    for (const s of f.states) t.tests[s]++;
    if (f.startMs !== undefined && !(f.startMs >= t.startMs)) t.startMs = f.startMs;
    if (f.endMs !== undefined && !(f.endMs <= t.endMs)) t.endMs = f.endMs;
  }
  return [...out.values()];
}

const seconds = (ms: number) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(1)} s` : '—');

/** One line per project, names and numbers aligned, then the seed line (when the order was shuffled). */
export function formatProjectTimes(tallies: readonly ProjectTally[], seed: number | null): string[] {
  const width = Math.max(0, ...tallies.map((t) => t.project.length));
  const lines = tallies.map((t) => {
    const { passed, failed, skipped, pending } = t.tests;
    const total = passed + failed + skipped + pending;
    const wall = seconds(t.endMs - t.startMs).padStart(9);
    return `[project-times] ${t.project.padEnd(width)}  wall ${wall}  ${t.files} files, ${total} tests: ${passed} passed, ${failed} failed, ${skipped + pending} skipped`;
  });
  if (seed !== null) lines.push(`[project-times] shuffled with seed ${seed} (same order again: MODELDOCK_TEST_SEED=${seed} npm test, or npx vitest run --sequence.seed=${seed})`);
  return lines;
}

export class ProjectTimesReporter implements Reporter {
  #vitest: Vitest | undefined;
  /** Per file of a project (the same file may run in two projects): when it started and ended. */
  readonly #spans = new Map<string, { startMs?: number; endMs?: number }>();
  readonly #now: () => number;

  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  onInit(vitest: Vitest): void {
    this.#vitest = vitest;
    this.#spans.clear();
  }

  onTestModuleStart(m: TestModule): void {
    this.#spans.set(spanKey(m), { startMs: this.#now() });
  }

  onTestModuleEnd(m: TestModule): void {
    this.#spans.set(spanKey(m), { ...this.#spans.get(spanKey(m)), endMs: this.#now() });
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const files: FileRun[] = modules.map((m) => ({
      project: m.project.name || '(root)',
      ...this.#spans.get(spanKey(m)),
      states: [...m.children.allTests()].map((t) => t.result().state),
    }));
    const log = (line: string) => (this.#vitest ? this.#vitest.logger.log(line) : console.log(line));
    log('');
    for (const line of formatProjectTimes(tallyProjects(files), this.#vitest?.getSeed() ?? null)) log(line);
  }
}

const spanKey = (m: TestModule) => `${m.project.name}\0${m.moduleId}`;

export default ProjectTimesReporter;
