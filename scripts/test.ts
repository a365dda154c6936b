// `npm test`: type-check, lint, then every vitest project, in phases that keep the suite within its
// budget on 2 cores. Two vitest processes run side by side: `unit` then `integration` (their suites
// mostly wait on their stack), and `vitess` then `node` (one waits on its database, the other on the
// kubelet). The `outage` suites run alone: they stop and freeze their stack's components on
// deadlines, and slowed and flaked beside the real node. The `multicluster` suites run last and alone:
// their stack is three clusters of control-plane processes. Each process starts only its projects'
// stacks. One shuffle seed serves every process (printed; MODELDOCK_TEST_SEED replays it). Any
// argument (`npm test -- -t name`, a file) runs one plain `vitest run` with it instead of the phases.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { randomInt } from 'node:crypto';
import { shuffleSeed } from '../vitest.config.ts';

const PHASES: readonly (readonly string[][])[] = [
  [
    ['unit', 'integration'],
    ['vitess', 'node'],
  ],
  [['outage']],
  [['multicluster']],
];

interface Outcome {
  label: string;
  code: number;
  /** vitest's lines that name a failed test, then its "Failed Tests" section: at most {@link FAILURE_LINES}. */
  failures: string[];
}

/** A CI log keeps the tail of the output: the failures of a phase that ran early are reprinted at the end. */
const FAILURE_LINES = 80;
const FAILED_TEST = /^\s*(×|FAIL\s)|error TS\d+|\s+error\s+/;
const FAILED_SECTION = /Failed Tests \d+|Unhandled Errors?/;
// eslint-disable-next-line no-control-regex -- the colours vitest writes
const stripColours = (line: string) => line.replace(/\x1b\[[0-9;]*m/g, '');

function run(label: string, cmd: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<Outcome> {
  return new Promise((resolve) => {
    const failures: string[] = [];
    let inSection = false;
    const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const prefix = (stream: NodeJS.ReadableStream, out: NodeJS.WriteStream) =>
      createInterface({ input: stream }).on('line', (line) => {
        out.write(`[${label}] ${line}\n`);
        const plain = stripColours(line);
        inSection ||= FAILED_SECTION.test(plain);
        if (failures.length < FAILURE_LINES && (inSection || FAILED_TEST.test(plain))) failures.push(plain);
      });
    prefix(child.stdout, process.stdout);
    prefix(child.stderr, process.stderr);
    child.on('error', (err) => {
      process.stderr.write(`[${label}] could not start: ${err.message}\n`);
      resolve({ label, code: 1, failures: [`could not start: ${err.message}`] });
    });
    child.on('close', (code, signal) => resolve({ label, code: code ?? (signal ? 1 : 0), failures }));
  });
}

/** A tool of the project's own node_modules (never a download). */
const tool = (label: string, args: readonly string[]) => run(label, 'npx', ['--no-install', ...args], env);
const t0 = Date.now();
const seconds = () => ((Date.now() - t0) / 1000).toFixed(1);

const extra = process.argv.slice(2);
const seed = shuffleSeed() ?? randomInt(1, 2 ** 31);
const env = { ...process.env, MODELDOCK_TEST_SEED: String(seed) };

const checks = await Promise.all([tool('typecheck', ['tsc', '--noEmit', '-p', '.']), tool('lint', ['eslint', '.'])]);
const failedOutcomes: Outcome[] = checks.filter((c) => c.code !== 0);
if (failedOutcomes.length === 0) {
  if (extra.length > 0) {
    const r = await tool('vitest', ['vitest', 'run', ...extra]);
    if (r.code !== 0) failedOutcomes.push(r);
  } else {
    for (const phase of PHASES) {
      const results = await Promise.all(
        phase.map((projects) => tool(projects.join('+'), ['vitest', 'run', ...projects.flatMap((p) => ['--project', p])])),
      );
      failedOutcomes.push(...results.filter((r) => r.code !== 0));
      console.log(`[test] phase ${phase.map((p) => p.join('+')).join(' | ')} done at ${seconds()} s`);
    }
  }
}
for (const { label, failures } of failedOutcomes) {
  console.log(`[test] ${label} failed; the lines that name its failures (${failures.length === 0 ? 'none matched: read its output above' : `first ${failures.length}`}):`);
  for (const line of failures) console.log(`[test]   [${label}] ${line}`);
}
const failed = failedOutcomes.map((o) => o.label);
console.log(`[test] ${failed.length === 0 ? 'passed' : `FAILED: ${failed.join(', ')}`} in ${seconds()} s (seed ${seed}: MODELDOCK_TEST_SEED=${seed} npm test replays the order)`);
process.exit(failed.length === 0 ? 0 : 1);
