// `npm run images [controller|mock-model]`: builds the images here, without a Docker daemon or
// a registry (see docs/images.md), and prints each image's reference, id, size and build time.
// Unchanged images are found by their input key and not rebuilt.
import { repoRoot } from './testenv/stack.ts';
import { buildImages, type ImageName } from './images/build.ts';

const names = process.argv.slice(2);
const known: ImageName[] = ['controller', 'mock-model'];
const bad = names.filter((n) => !known.includes(n as ImageName));
if (bad.length) {
  console.error(`usage: npm run images [${known.join('|')}]… (unknown: ${bad.join(', ')})`);
  process.exit(2);
}
try {
  const r = await buildImages({ repo: repoRoot, only: names.length ? (names as ImageName[]) : undefined });
  const s = r.base.seconds;
  console.log(`base        ${r.base.ref}  (Node ${r.base.nodeVersion}; rootfs ${s.rootfs.toFixed(1)} s, node ${s.node.toFixed(1)} s, image ${s.image.toFixed(1)} s)`);
  for (const i of r.images) {
    const mb = (i.sizeBytes / 1e6).toFixed(1);
    console.log(`${i.name.padEnd(11)} ${i.ref}  ${i.keyRef}  id ${i.id.slice(0, 12)}  ${mb} MB  ${i.built ? `built in ${i.seconds.toFixed(1)} s` : 'unchanged'}`);
  }
  console.log(`total ${r.seconds.toFixed(1)} s`);
} catch (err) {
  console.error(`[images] ${(err as Error).message}`);
  process.exit(1);
}
