// The operator's admission policy, as pure data and pure checks (no I/O): per-replica resource
// defaults, minimums and maximums, the image registries tenants may run, and the environment
// variables no tenant may set. The Worker applies it at admission (functions/config.ts reads it
// from its vars); the controller re-checks the image at delivery with its own copy of the
// registry list (controller/main.ts), so a policy tightened later is enforced on what is queued.
import { amountsPerReplica, type ReplicaAmounts } from './model-service.ts';

/** One allowed registry: a host (with port) and an optional path prefix, e.g. ghcr.io/acme. */
export interface RegistryRule {
  host: string;
  pathPrefix: string;
}

export interface ResourcePolicy {
  /** Per-replica quantities written into a request that leaves cpu or memory out; none = 400. */
  defaults: { cpu?: string; memory?: string };
  /** Per-replica minimums and maximums in ledger units (millicores, MiB). */
  min: Pick<ReplicaAmounts, 'cpu' | 'memory'>;
  max: Pick<ReplicaAmounts, 'cpu' | 'memory'>;
}

export class PolicyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PolicyError';
  }
}

const HOST = /^(?:localhost|[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*)(?::\d{1,5})?$/;
const PATH = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$/;

/**
 * `ALLOWED_IMAGE_REGISTRIES`: a comma list of `host[:port][/path/prefix]`. Empty = any registry.
 * Docker Hub is `docker.io` (images without a registry, such as `nginx`, are `docker.io/library/nginx`).
 */
export function parseRegistryList(text: string | undefined): RegistryRule[] {
  const rules: RegistryRule[] = [];
  for (const raw of (text ?? '').split(',')) {
    const entry = raw.trim().toLowerCase().replace(/\/+$/, '');
    if (!entry) continue;
    const slash = entry.indexOf('/');
    const host = slash < 0 ? entry : entry.slice(0, slash);
    const pathPrefix = slash < 0 ? '' : entry.slice(slash + 1);
    if (!HOST.test(host) || (pathPrefix && !PATH.test(pathPrefix))) {
      throw new PolicyError(`ALLOWED_IMAGE_REGISTRIES: "${raw.trim().slice(0, 100)}" is not host[:port][/path]`);
    }
    rules.push({ host, pathPrefix });
  }
  return rules;
}

/** Registry host and repository path of an image reference, with Docker's defaults. */
export function imageLocation(image: string): { host: string; path: string } {
  const ref = image.replace(/@sha256:[a-f0-9]{64}$/, '');
  const slash = ref.indexOf('/');
  const first = slash < 0 ? '' : ref.slice(0, slash);
  // Like Docker: the first component is a registry only if it has a dot or a port, or is localhost.
  const isRegistry = first !== '' && (first.includes('.') || first.includes(':') || first === 'localhost');
  const host = isRegistry ? first.toLowerCase() : 'docker.io';
  let path = isRegistry ? ref.slice(slash + 1) : ref;
  path = path.replace(/:[\w][\w.-]{0,127}$/, '');
  if (host === 'docker.io' && !path.includes('/')) path = `library/${path}`;
  return { host, path };
}

/** Why the policy refuses this image, or undefined when it is allowed (always, with no rules). */
export function imageRefusal(image: string, rules: readonly RegistryRule[]): string | undefined {
  if (rules.length === 0) return undefined;
  const { host, path } = imageLocation(image);
  const allowed = rules.some((r) => r.host === host && (r.pathPrefix === '' || path === r.pathPrefix || path.startsWith(`${r.pathPrefix}/`)));
  if (allowed) return undefined;
  return `registry ${host} (${host}/${path}) is not allowed; allowed: ${rules.map((r) => (r.pathPrefix ? `${r.host}/${r.pathPrefix}` : r.host)).join(', ')}`;
}

/** Per-replica resources with the defaults filled in, or the issues (field path → message). */
export function applyResourcePolicy(
  requested: { cpu?: string | undefined; memory?: string | undefined; 'nvidia.com/gpu'?: string | undefined },
  policy: ResourcePolicy,
): { resources: { cpu: string; memory: string; 'nvidia.com/gpu'?: string }; issues: [] } | { issues: Array<{ path: string; message: string }> } {
  const issues: Array<{ path: string; message: string }> = [];
  const cpu = requested.cpu ?? policy.defaults.cpu;
  const memory = requested.memory ?? policy.defaults.memory;
  if (cpu === undefined) issues.push({ path: 'resources.cpu', message: 'required: every replica is charged cpu, and no default (DEFAULT_CPU) is configured' });
  if (memory === undefined) issues.push({ path: 'resources.memory', message: 'required: every replica is charged memory, and no default (DEFAULT_MEMORY) is configured' });
  if (cpu === undefined || memory === undefined) return { issues };
  const gpu = requested['nvidia.com/gpu'];
  const one = amountsPerReplica({ cpu, memory });
  for (const [name, unit] of [['cpu', 'm'], ['memory', 'Mi']] as const) {
    if (one[name] < policy.min[name]) issues.push({ path: `resources.${name}`, message: `at least ${policy.min[name]}${unit} per replica` });
    if (one[name] > policy.max[name]) issues.push({ path: `resources.${name}`, message: `at most ${policy.max[name]}${unit} per replica` });
  }
  if (issues.length > 0) return { issues };
  return { resources: gpu === undefined ? { cpu, memory } : { cpu, memory, 'nvidia.com/gpu': gpu }, issues: [] };
}
