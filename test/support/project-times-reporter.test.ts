import { describe, expect, it } from 'vitest';
import { formatProjectTimes, tallyProjects, type FileRun } from './project-times-reporter.ts';

describe('tallyProjects', () => {
  it('spans each project from its first file start to its last file end, and counts files and tests', () => {
    const files: FileRun[] = [
      { project: 'unit', startMs: 100, endMs: 400, states: ['passed', 'passed'] },
      { project: 'integration', startMs: 5_000, endMs: 9_000, states: ['passed', 'failed', 'skipped'] },
      { project: 'unit', startMs: 50, endMs: 300, states: ['passed', 'pending'] },
      { project: 'integration', startMs: 4_000, endMs: 12_500, states: [] },
    ];
    expect(tallyProjects(files)).toEqual([
      { project: 'unit', startMs: 50, endMs: 400, files: 2, tests: { passed: 3, failed: 0, skipped: 0, pending: 1 } },
      { project: 'integration', startMs: 4_000, endMs: 12_500, files: 2, tests: { passed: 1, failed: 1, skipped: 1, pending: 0 } },
    ]);
  });

  it('a file that never started (collect error, bail) still counts; its missing times do not', () => {
    const [t] = tallyProjects([
      { project: 'outage', states: ['failed'] },
      { project: 'outage', startMs: 10, endMs: 20, states: ['passed'] },
      { project: 'outage', startMs: 30, states: [] },
    ]);
    expect(t).toMatchObject({ startMs: 10, endMs: 20, files: 3, tests: { passed: 1, failed: 1 } });
  });

  it('a project none of whose files ran has no span', () => {
    const [t] = tallyProjects([{ project: 'vitess', states: ['skipped'] }]);
    expect(t?.startMs).toBeNaN();
    expect(t?.endMs).toBeNaN();
  });
});

describe('formatProjectTimes', () => {
  const tests = { passed: 0, failed: 0, skipped: 0, pending: 0 };

  it('one aligned line per project, then the seed and how to replay it', () => {
    expect(
      formatProjectTimes(
        [
          { project: 'unit', startMs: 0, endMs: 12_340, files: 85, tests: { ...tests, passed: 1200, skipped: 2 } },
          { project: 'integration', startMs: 20_000, endMs: 632_049, files: 31, tests: { ...tests, passed: 178, failed: 1, pending: 1 } },
        ],
        1234,
      ),
    ).toEqual([
      '[project-times] unit         wall    12.3 s  85 files, 1202 tests: 1200 passed, 0 failed, 2 skipped',
      '[project-times] integration  wall   612.0 s  31 files, 180 tests: 178 passed, 1 failed, 1 skipped',
      '[project-times] shuffled with seed 1234 (same order again: MODELDOCK_TEST_SEED=1234 npm test, or npx vitest run --sequence.seed=1234)',
    ]);
  });

  it('no seed line when the order was not shuffled; a dash for a project without a span', () => {
    expect(formatProjectTimes([{ project: 'vitess', startMs: NaN, endMs: NaN, files: 1, tests: { ...tests, skipped: 3 } }], null)).toEqual([
      '[project-times] vitess  wall         —  1 files, 3 tests: 0 passed, 0 failed, 3 skipped',
    ]);
  });
});
