// GPU isolation, proven inside a running container: an image built on a CUDA base carries
// `ENV NVIDIA_VISIBLE_DEVICES=all`, which the NVIDIA container runtime would honour on a GPU node
// and hand the pod every GPU without a charge. The controller gives every container without a GPU
// request `NVIDIA_VISIBLE_DEVICES=void` (and an empty AMD_VISIBLE_DEVICES); the container's env
// overrides the image's. Read from the running process's /proc/<pid>/environ on the real node.
import { describe, expect, it } from 'vitest';
import { CUDA_ENV_IMAGE } from '../../scripts/testenv/node.ts';
import { mockAdmission, onRealNode, podsOf, runningEnv, useNodeSystem } from '../support/real-node.ts';
import { waitFor } from '../support/wait.ts';

const system = useNodeSystem();

describe('GPU isolation on the real node', () => {
  it('an image whose ENV sets NVIDIA_VISIBLE_DEVICES=all runs with void when it requests no GPU; the rest of its ENV stays', async () => {
    const [id] = await system().admit(1, mockAdmission({ name: 'cuda-env', image: CUDA_ENV_IMAGE }));
    await system().untilState([id!], 'ready', 120_000);
    const pod = await waitFor('the running pod', async () => {
      const pods = await podsOf(system().tenantNamespace, id!);
      return onRealNode(pods) && pods[0]?.status?.containerStatuses?.[0]?.state?.running ? pods[0] : undefined;
    }, { timeoutMs: 60_000 });
    const env = await runningEnv(pod);
    expect(env.get('NVIDIA_VISIBLE_DEVICES')).toBe('void');
    expect(env.get('AMD_VISIBLE_DEVICES')).toBe('');
    expect(env.get('NVIDIA_DRIVER_CAPABILITIES')).toBe('compute,utility'); // the image's ENV reached the container
    expect((await system().api(`/requests/${id}`, { method: 'DELETE' })).status).toBe(202);
    await system().untilState([id!], 'released', 120_000);
  }, 240_000);
});
