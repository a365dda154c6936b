// `--clusters N` of `npm run dev` and `npm run stack` (docs/multi-cluster.md, "Local stack"): how many
// Kubernetes clusters the local stack runs. At most 3: each is an apiserver, a kcm, a scheduler and a
// KWOK node on the machine's 2 cores.
export const MAX_STACK_CLUSTERS = 3;

export function clusterCount(argv: readonly string[]): number {
  const at = argv.findIndex((a) => a === '--clusters' || a.startsWith('--clusters='));
  if (at < 0) return 1;
  const arg = argv[at]!;
  const raw = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[at + 1];
  const n = Number(raw);
  if (raw === undefined || !/^\d+$/.test(raw) || n < 1 || n > MAX_STACK_CLUSTERS) throw new Error(`--clusters takes a whole number from 1 to ${MAX_STACK_CLUSTERS}, not ${raw === undefined ? 'nothing' : `"${raw}"`}`);
  return n;
}
