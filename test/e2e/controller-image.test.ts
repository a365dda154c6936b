// The controller IMAGE serves: built here without a Docker daemon (npm run images: Debian base
// from mmdebstrap, Node from the npm platform package, buildah; reused when unchanged), run with
// podman as its image user 10001:10001 on a read-only root filesystem, authenticated as the
// modeldock-controller ServiceAccount of the namespace's install (k8s/ applied with kustomize), with DATABASE_URL set. One admission goes
// POST → ready → DELETE → released, and the ledger agrees with the cluster.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildImages, type BuiltImage } from '../../scripts/images/build.ts';
import { repoRoot } from '../../scripts/testenv/stack.ts';
import { startControllerContainer, type ControllerContainer } from '../support/controller-image.ts';
import { TEST_LEASE_ENV } from '../support/controller-process.ts';
import { installModelDock } from '../support/install.ts';
import { startSystem, type System } from '../support/system.ts';

let image: BuiltImage;
let sys: System;
let ctl: ControllerContainer;

beforeAll(async () => {
  // A cold build (tools, Debian root filesystem, Node, layers) takes minutes; a warm one finds the image.
  const built = await buildImages({ repo: repoRoot, only: ['controller'], log: (m) => console.error(m) });
  image = built.images[0]!;
  console.error(`[controller-image] ${image.ref} ${image.id.slice(0, 12)} ${(image.sizeBytes / 1e6).toFixed(1)} MB (${image.built ? 'built' : 'cached'}, ${built.seconds.toFixed(1)} s)`);
  sys = await startSystem();
  ctl = await startControllerContainer({
    name: 'ctl-image',
    image: image.keyRef,
    namespace: sys.namespace,
    kubeconfig: (await installModelDock(sys.namespace)).kubeconfig,
    env: { DATABASE_URL: sys.ledger.url, LOG_LEVEL: 'debug', ...TEST_LEASE_ENV },
  });
}, 1_200_000);

afterAll(async () => {
  await ctl?.stop();
  await sys?.stop();
});

describe('the controller image', () => {
  it('runs as the numeric non-root user of its Dockerfile', async () => {
    expect(await ctl.exec(['id', '-u'])).toBe('10001');
    expect(await ctl.exec(['id', '-g'])).toBe('10001');
    expect(await ctl.exec(['node', '--version'])).toMatch(/^v24\./);
  });

  it('serves one admission end to end: ready, then released', async () => {
    const [id] = await sys.admit(1);
    await sys.untilState([id!], 'ready');
    const del = await sys.api(`/requests/${id}`, { method: 'DELETE' });
    expect(del.status).toBe(202);
    await sys.untilState([id!], 'released');
    expect(await sys.check()).toEqual([]);
  });
});
