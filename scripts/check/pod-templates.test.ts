// Stands in for the kubelet (KWOK runs none): the shipped Dockerfiles, every pod template in
// k8s/ (each kustomization rendered as a user would apply it) and the pod template the
// controller generates must pass checks/pod-templates.ts; and the check itself must catch
// each violation it exists for.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';
import { loadAllYaml } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { desiredDeployment } from '../../controller/modelservice/desired.ts';
import { modelServiceSpecSchema, type ModelService } from '../../schema/model-service.ts';
import { repoRoot } from '../testenv/stack.ts';
import { checkDockerfile, checkObjects, checkPodSpec, finalUser, type PodSpec } from './pod-templates.ts';

const good: PodSpec = {
  securityContext: { runAsNonRoot: true, runAsUser: 10001 },
  containers: [{ name: 'c', resources: { limits: { memory: '128Mi' } } }],
};

describe('the check catches', () => {
  it.each([
    ['a named user', 'FROM node:24-slim\nUSER node\n', 'not numeric'],
    ['no USER in the final stage', 'FROM a AS b\nUSER 10001:10001\nFROM c\nCMD ["x"]\n', 'no USER'],
    ['root', 'FROM a\nUSER 0:0\n', 'root'],
    ['a uid without a group (gid 0)', 'FROM a\nUSER 10001\n', 'no numeric group'],
    ['a named user after a continuation', 'FROM a\nRUN true \\\n && true\nUSER app:app\n', 'not numeric'],
  ])('a Dockerfile with %s', (_n, text, problem) => {
    const findings = checkDockerfile('Dockerfile', text);
    expect(findings).toHaveLength(1);
    expect(findings[0]!.problem).toContain(problem);
  });

  it.each<[string, PodSpec, string]>([
    ['runAsNonRoot without runAsUser', { securityContext: { runAsNonRoot: true }, containers: [{ name: 'c', resources: { limits: { memory: '1Gi' } } }] }, 'numeric runAsUser'],
    ['runAsNonRoot at container level, no user anywhere', { containers: [{ name: 'c', securityContext: { runAsNonRoot: true }, resources: { limits: { memory: '1Gi' } } }] }, 'numeric runAsUser'],
    ['a named runAsUser', { securityContext: { runAsNonRoot: true, runAsUser: 'node' }, containers: [{ name: 'c', resources: { limits: { memory: '1Gi' } } }] }, 'numeric runAsUser'],
    ['runAsUser 0', { securityContext: { runAsNonRoot: true, runAsUser: 0 }, containers: [{ name: 'c', resources: { limits: { memory: '1Gi' } } }] }, 'runAsUser 0'],
    ['a container without limits', { ...good, containers: [...good.containers!, { name: 'sidecar' }] }, 'limits.memory'],
    ['an init container without limits', { ...good, initContainers: [{ name: 'init' }] }, 'limits.memory'],
  ])('a pod template with %s', (_n, spec, problem) => {
    const findings = checkPodSpec('pod', spec);
    expect(findings).toHaveLength(1);
    expect(findings[0]!.problem).toContain(problem);
  });

  it('accepts the user at container level and finds templates in workloads and CronJobs', () => {
    expect(checkPodSpec('pod', { securityContext: { runAsNonRoot: true }, containers: [{ name: 'c', securityContext: { runAsUser: 10001 }, resources: { limits: { memory: '1Gi' } } }] })).toEqual([]);
    const bad = { securityContext: { runAsNonRoot: true }, containers: [{ name: 'c' }] };
    const objs = [
      { kind: 'Deployment', metadata: { name: 'd' }, spec: { template: { spec: bad } } },
      { kind: 'CronJob', metadata: { name: 'cj' }, spec: { jobTemplate: { spec: { template: { spec: bad } } } } },
      { kind: 'Pod', metadata: { name: 'p' }, spec: bad },
      { kind: 'Service', metadata: { name: 's' }, spec: {} },
    ];
    expect(checkObjects('x.yaml', objs).map((f) => f.where.split(' ')[1])).toEqual(['Deployment/d', 'Deployment/d', 'CronJob/cj', 'CronJob/cj', 'Pod/p', 'Pod/p']);
  });

  it('reads the USER of the final stage only', () => {
    expect(finalUser('FROM a\nUSER 1:1\nFROM b\n# USER 2:2\nUSER 3:3\n')).toBe('3:3');
  });
});

// kubectl from PATH, else the local stack's build (scripts/testenv/build.sh), else undefined.
function kubectl(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(':')) if (dir && existsSync(join(dir, 'kubectl'))) return join(dir, 'kubectl');
  const bin = join(process.env.MODELDOCK_CACHE ?? join(homedir(), '.cache/modeldock'), 'bin');
  const farm = existsSync(bin) ? readdirSync(bin).filter((d) => d.startsWith('stack-')).map((d) => join(bin, d, 'kubectl')) : [];
  return farm.find((k) => existsSync(k));
}

/** Every folder under k8s/ with a kustomization.yaml. */
function kustomizations(dir = join(repoRoot, 'k8s')): string[] {
  const out = existsSync(join(dir, 'kustomization.yaml')) ? [dir] : [];
  for (const e of readdirSync(dir)) if (statSync(join(dir, e)).isDirectory()) out.push(...kustomizations(join(dir, e)));
  return out;
}

/** Every YAML file under k8s/ (the fallback when no kubectl can render the kustomizations). */
function yamlFiles(dir = join(repoRoot, 'k8s')): string[] {
  return readdirSync(dir).flatMap((e) => {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) return yamlFiles(p);
    return /\.ya?ml$/.test(e) && e !== 'kustomization.yaml' ? [p] : [];
  });
}

type Objects = Parameters<typeof checkObjects>[1];

describe('the repository passes', () => {
  it.each(['controller/Dockerfile', 'mock/Dockerfile'])('%s: numeric non-root USER uid:gid', (file) => {
    expect(checkDockerfile(file, readFileSync(join(repoRoot, file), 'utf8'))).toEqual([]);
  });

  it('every pod template in k8s/ (each kustomization rendered; raw YAML without kubectl)', () => {
    const k = kubectl();
    const sources: [string, Objects][] = k
      ? kustomizations().map((d) => [`kubectl kustomize ${relative(repoRoot, d) || '.'}`, loadAllYaml(execFileSync(k, ['kustomize', d], { encoding: 'utf8', timeout: 60_000 })) as Objects])
      : yamlFiles().map((f) => [relative(repoRoot, f), loadAllYaml(readFileSync(f, 'utf8')) as Objects]);
    const findings = sources.flatMap(([source, objs]) => checkObjects(source, objs));
    expect(findings).toEqual([]);
    // The controller's Deployment was found: the check did not pass for want of templates.
    const kinds = sources.flatMap(([, objs]) => objs.map((o) => `${o.kind}/${o.metadata?.name}`));
    expect(kinds).toContain('Deployment/modeldock-controller');
  }, 120_000); // kubectl kustomize per kustomization (each boxed at 60 s): slow on a loaded disk

  it('the pod template the controller generates for a ModelService', () => {
    const ms: ModelService = {
      apiVersion: 'modeldock.io/v1alpha1',
      kind: 'ModelService',
      metadata: { name: 'md-01abc', namespace: 'lab', uid: 'uid-1' },
      spec: modelServiceSpecSchema.parse({ image: 'example.invalid/m:1', replicas: 1, resources: { cpu: '500m', memory: '1Gi' } }),
    };
    const d = desiredDeployment(ms, ms.spec);
    expect(checkObjects('desiredDeployment', [d as Objects[number]])).toEqual([]);
  });
});
