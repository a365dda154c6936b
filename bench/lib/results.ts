// What a benchmark returns, and the record of a run appended to bench/RESULTS.md (full runs)
// or to the run directory's RESULTS-quick.md (quick runs: CI keeps the scripts from rotting,
// its numbers are not worth keeping).
import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import type { Machine } from './machine.ts';

export interface BenchResult {
  id: string;
  title: string;
  /** The ONE summary line (contains `ratio=`). */
  summary: string;
  /** Markdown lines with the detail behind the summary. */
  details: string[];
  seconds: number;
}

export const RESULTS_HEADER = `# Benchmark results

Appended by \`npm run bench\` (bench/run.ts): one section per run, newest last. Only the ratios
mean much — every run shares 2 cores with whatever else the machine does (its load average is
recorded). What each benchmark measures and against what: bench/README.md.
`;

export function renderRun(m: Machine, mode: string, loadAfter: string, results: readonly BenchResult[], failures: readonly string[]): string {
  const lines = [
    '',
    `## ${m.date} — ${mode}`,
    '',
    `- machine: nproc ${m.nproc} (${m.cpuModel}), memory ${m.memoryGiB} GiB (${m.freeGiB} GiB free at start), load average ${m.load} at start, ${loadAfter} at end; commit ${m.commit}`,
    `- versions: ${Object.entries(m.versions)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
    '',
    '| benchmark | summary |',
    '|---|---|',
    ...results.map((r) => `| ${r.id} ${r.title} | \`${r.summary.replace(/\|/g, '/')}\` |`),
    ...failures.map((f) => `| FAILED | ${f.replace(/\|/g, '/').replace(/\n/g, ' ')} |`),
    '',
  ];
  for (const r of results) lines.push(`### ${r.id} ${r.title} (${r.seconds.toFixed(0)} s)`, '', ...r.details, '');
  return lines.join('\n');
}

export function appendRun(file: string, text: string): void {
  if (!existsSync(file)) writeFileSync(file, RESULTS_HEADER);
  appendFileSync(file, text);
}
