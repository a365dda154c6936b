// Stands in for the kubelet (KWOK runs none): the shipped Dockerfiles and the pod template the
// controller generates must pass checks/pod-templates.ts; and the check itself must catch
// each violation it exists for. Every pod template in k8s/ is checked as the API server would
// store it — each kustomization rendered by the stack's kubectl — in
// test/integration/manifests.test.ts: that check needs kubectl, so it lives where kubectl
// always is, and is never swapped for a weaker one here.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
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

type Objects = Parameters<typeof checkObjects>[1];

describe('the repository passes', () => {
  it.each(['controller/Dockerfile', 'mock/Dockerfile'])('%s: numeric non-root USER uid:gid', (file) => {
    expect(checkDockerfile(file, readFileSync(join(repoRoot, file), 'utf8'))).toEqual([]);
  });

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
