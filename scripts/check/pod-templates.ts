// What a kubelet would refuse or a cluster admin would flag, checked without a kubelet (KWOK
// runs none): an image's final USER must be numeric and not root, and every pod template that
// sets runAsNonRoot must give a numeric, non-zero runAsUser (pod or container level) — the
// kubelet cannot verify a named image user ("image has non-numeric user … cannot verify user is
// non-root") — and every container must have a memory limit. Pure: text/objects in, findings out.

export interface Finding {
  where: string;
  problem: string;
}

const NUMERIC_USER = /^(\d+)(?::(\d+))?$/;

/** The USER of the final stage of a Dockerfile (continuations joined, comments dropped), or undefined. */
export function finalUser(dockerfile: string): string | undefined {
  const lines = dockerfile
    .replace(/\\\r?\n/g, ' ')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  let user: string | undefined;
  for (const l of lines) {
    const [instr, ...rest] = l.split(/\s+/);
    if (/^from$/i.test(instr!)) user = undefined; // each stage starts over
    if (/^user$/i.test(instr!)) user = rest.join(' ');
  }
  return user;
}

export function checkDockerfile(where: string, dockerfile: string): Finding[] {
  const user = finalUser(dockerfile);
  if (user === undefined) return [{ where, problem: 'the final stage sets no USER (runs as root)' }];
  const m = NUMERIC_USER.exec(user);
  if (!m) return [{ where, problem: `final USER "${user}" is not numeric uid:gid (the kubelet cannot verify runAsNonRoot)` }];
  if (Number(m[1]) === 0) return [{ where, problem: 'final USER is root (uid 0)' }];
  if (m[2] === undefined) return [{ where, problem: `final USER "${user}" has no numeric group (USER uid alone runs with gid 0)` }];
  return [];
}

interface SecurityContext {
  runAsNonRoot?: boolean;
  runAsUser?: unknown;
}
interface Container {
  name?: string;
  securityContext?: SecurityContext;
  resources?: { limits?: Record<string, unknown> };
}
export interface PodSpec {
  securityContext?: SecurityContext;
  containers?: Container[];
  initContainers?: Container[];
}
interface KubeObjectLike {
  kind?: string;
  metadata?: { name?: string; namespace?: string };
  spec?: Record<string, unknown>;
}

/** The pod specs an object carries: a Pod's own, a workload's template, a CronJob's job template. */
export function podSpecsOf(obj: KubeObjectLike): { where: string; spec: PodSpec }[] {
  const where = `${obj.kind}/${obj.metadata?.name ?? '?'}`;
  const spec = obj.spec as { template?: { spec?: PodSpec }; jobTemplate?: { spec?: { template?: { spec?: PodSpec } } } } | undefined;
  if (!spec) return [];
  if (obj.kind === 'Pod') return [{ where, spec: spec as PodSpec }];
  const tpl = spec.template?.spec ?? spec.jobTemplate?.spec?.template?.spec;
  return tpl ? [{ where, spec: tpl }] : [];
}

const isUid = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;

export function checkPodSpec(where: string, pod: PodSpec): Finding[] {
  const findings: Finding[] = [];
  const containers = [...(pod.initContainers ?? []), ...(pod.containers ?? [])];
  if (containers.length === 0) findings.push({ where, problem: 'pod template has no containers' });
  for (const c of containers) {
    const at = `${where} container ${c.name ?? '?'}`;
    const nonRoot = c.securityContext?.runAsNonRoot ?? pod.securityContext?.runAsNonRoot;
    const user = c.securityContext?.runAsUser ?? pod.securityContext?.runAsUser;
    if (nonRoot === true && !isUid(user)) {
      findings.push({ where: at, problem: 'runAsNonRoot is set without a numeric runAsUser (pod or container level): the kubelet refuses a named image user' });
    } else if (nonRoot === true && user === 0) {
      findings.push({ where: at, problem: 'runAsNonRoot is set with runAsUser 0' });
    }
    const limits = c.resources?.limits ?? {};
    if (limits.memory === undefined) findings.push({ where: at, problem: 'no resources.limits.memory' });
  }
  return findings;
}

export function checkObjects(source: string, objects: KubeObjectLike[]): Finding[] {
  return objects.flatMap((o) => podSpecsOf(o).flatMap((p) => checkPodSpec(`${source}: ${p.where}`, p.spec)));
}
