// Private configuration for buildah and podman: storage (overlay, graph and run roots) and
// engine settings in a cache folder, selected with CONTAINERS_CONF / CONTAINERS_STORAGE_CONF,
// so nothing on the machine is changed. The engine settings are the ones podman needs to run
// containers on these machines (see docs/images.md): runc (crun cannot set rlimits here),
// cgroupfs, explicit ulimits (runc fails without them), file events.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The image cache (`$MODELDOCK_CACHE/images`, default ~/.cache/modeldock/images). */
export function imageCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.MODELDOCK_CACHE ?? join(homedir(), '.cache/modeldock'), 'images');
}

export function containersConf(): string {
  return [
    '# Written by scripts/images/containers.ts (ModelDock); used only through CONTAINERS_CONF.',
    '[containers]',
    'default_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]',
    '[engine]',
    'runtime = "runc"',
    'cgroup_manager = "cgroupfs"',
    'events_logger = "file"',
    '',
  ].join('\n');
}

export function storageConf(root: string): string {
  return [
    '# Written by scripts/images/containers.ts (ModelDock); used only through CONTAINERS_STORAGE_CONF.',
    '[storage]',
    'driver = "overlay"',
    `graphroot = "${join(root, 'storage')}"`,
    `runroot = "${join(root, 'run')}"`,
    '[storage.options.overlay]',
    // No private bind mount of the storage's overlay folder onto itself: one that a killed
    // buildah or podman never unmounted stays on the host.
    'skip_mount_home = "true"',
    '',
  ].join('\n');
}

/** Writes both files under `<cache>/containers` and returns the environment selecting them. */
export function containersEnv(cache = imageCacheDir()): Record<string, string> {
  const root = join(cache, 'containers');
  mkdirSync(join(root, 'tmp'), { recursive: true });
  const conf = join(root, 'containers.conf');
  const storage = join(root, 'storage.conf');
  writeIfChanged(conf, containersConf());
  writeIfChanged(storage, storageConf(root));
  return { CONTAINERS_CONF: conf, CONTAINERS_STORAGE_CONF: storage, TMPDIR: join(root, 'tmp') };
}

// Several worktrees may build at once: never leave a half-written file for another reader.
function writeIfChanged(path: string, text: string): void {
  if (existsSync(path) && readFileSync(path, 'utf8') === text) return;
  const tmp = `${path}.${process.pid}`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}
