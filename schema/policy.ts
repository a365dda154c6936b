// The operator's admission policy, as pure data and pure checks (no I/O): per-replica resource
// defaults, minimums and maximums, the image registries tenants may run, and the environment
// variables no tenant may set. The Worker applies it at admission (functions/config.ts reads it
// from its vars); the controller re-checks the image at delivery with its own copy of the
// registry list (controller/main.ts), so a policy tightened later is enforced on what is queued.
import { parseImage } from './image-reference.ts';
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

/** The one rule of `ALLOWED_IMAGE_REGISTRIES=*`: images from any registry. */
export const ANY_REGISTRY: readonly RegistryRule[] = Object.freeze([Object.freeze({ host: '*', pathPrefix: '' })]);

/** True when the rules are `*`: any registry, as the operator said explicitly. */
export const allowsAnyRegistry = (rules: readonly RegistryRule[]): boolean => rules.some((r) => r.host === '*');

/**
 * `ALLOWED_IMAGE_REGISTRIES`: a comma list of `host[:port][/path/prefix]`, or `*` alone for any
 * registry. Empty or absent is refused: a deployment states where its tenants' images come from.
 * Docker Hub is `docker.io` (`nginx` is `docker.io/library/nginx`; `index.docker.io` means the same).
 */
export function parseRegistryList(text: string | undefined): RegistryRule[] {
  const entries = (text ?? '').split(',').map((raw) => raw.trim()).filter((e) => e !== '');
  if (entries.length === 0) {
    throw new PolicyError('ALLOWED_IMAGE_REGISTRIES is empty: list the registries tenants\' images may come from (host[:port][/path], comma-separated), or * for any registry');
  }
  if (entries.includes('*')) {
    if (entries.length > 1) throw new PolicyError('ALLOWED_IMAGE_REGISTRIES: * (any registry) stands alone, without other entries');
    return [...ANY_REGISTRY];
  }
  const rules: RegistryRule[] = [];
  for (const raw of entries) {
    const entry = raw.toLowerCase().replace(/\/+$/, '');
    const slash = entry.indexOf('/');
    const written = slash < 0 ? entry : entry.slice(0, slash);
    const host = written === 'index.docker.io' ? 'docker.io' : written;
    const pathPrefix = slash < 0 ? '' : entry.slice(slash + 1);
    if (!HOST.test(host) || (pathPrefix && !PATH.test(pathPrefix))) {
      throw new PolicyError(`ALLOWED_IMAGE_REGISTRIES: "${raw.slice(0, 100)}" is not host[:port][/path]`);
    }
    rules.push({ host, pathPrefix });
  }
  return rules;
}

export type ImageLocation = { ok: true; host: string; path: string } | { ok: false; reason: string };

/**
 * The registry host the container runtime pulls an image from and its repository path there,
 * normalized as the runtime does it (schema/image-reference.ts): `nginx` → docker.io /
 * library/nginx, `Evil/model` → the host `Evil`. The host keeps its case: `GHCR.io` is not `ghcr.io`.
 */
export function imageLocation(image: string): ImageLocation {
  const parsed = parseImage(image);
  return parsed.ok ? { ok: true, host: parsed.ref.domain, path: parsed.ref.path } : { ok: false, reason: parsed.reason };
}

/** Why the policy refuses this image, or undefined when it is allowed. No rules allow nothing. */
export function imageRefusal(image: string, rules: readonly RegistryRule[]): string | undefined {
  const loc = imageLocation(image);
  if (!loc.ok) return `not an image reference the container runtime reads as written: ${loc.reason}`;
  if (allowsAnyRegistry(rules)) return undefined;
  const allowed = rules.some((r) => r.host === loc.host && (r.pathPrefix === '' || loc.path === r.pathPrefix || loc.path.startsWith(`${r.pathPrefix}/`)));
  if (allowed) return undefined;
  const list = rules.length === 0 ? 'none' : rules.map((r) => (r.pathPrefix ? `${r.host}/${r.pathPrefix}` : r.host)).join(', ');
  const hint = image.startsWith(`${loc.host}/`) && loc.host !== loc.host.toLowerCase() && !/[.:]/.test(loc.host)
    ? `; the container runtime reads a first component with a capital letter as a registry host`
    : '';
  return `registry ${loc.host} (${loc.host}/${loc.path}) is not allowed${hint}; allowed: ${list}`;
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
