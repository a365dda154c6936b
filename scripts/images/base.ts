// The base image without a registry: a Debian root filesystem built from packages with
// mmdebstrap (from the machine's own apt mirrors), plus the Node binary from the npm
// registry's platform package (node-linux-<arch>@<version pinned in package-lock.json>,
// integrity checked). Each piece is cached under a key of its inputs; a second run only
// looks the image up.
import { createHash } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { debianMirrors, mirrorLines, osCodename, parseDeb822, parseOneLine, type AptSource } from './apt-sources.ts';
import { run } from './run.ts';

export const SUITE = 'bookworm';
// Keep copyright files, drop what a server never reads.
const DPKG_OPTS = [
  'path-exclude=/usr/share/man/*',
  'path-exclude=/usr/share/info/*',
  'path-exclude=/usr/share/locale/*',
  'path-exclude=/usr/share/doc/*',
  'path-include=/usr/share/doc/*/copyright',
];
const INCLUDE = ['ca-certificates'];

export interface BaseImage {
  ref: string;
  nodeVersion: string;
  rootfsSha256: string;
  /** Seconds spent (0 when everything came from the cache). */
  seconds: { rootfs: number; node: number; image: number };
}

export interface BaseContext {
  repo: string;
  cache: string;
  env: Record<string, string>;
  log: (msg: string) => void;
}

export const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');
const arch = (): { deb: string; node: string } => {
  if (process.arch === 'x64') return { deb: 'amd64', node: 'x64' };
  if (process.arch === 'arm64') return { deb: 'arm64', node: 'arm64' };
  throw new Error(`no Debian/Node platform mapping for ${process.arch}`);
};

/** The machine's apt sources (both formats), for the mirror URLs. */
export function machineAptSources(etc = '/etc/apt'): AptSource[] {
  const out: AptSource[] = [];
  if (existsSync(join(etc, 'sources.list'))) out.push(...parseOneLine(readFileSync(join(etc, 'sources.list'), 'utf8')));
  const dir = join(etc, 'sources.list.d');
  for (const f of existsSync(dir) ? readdirSync(dir).sort() : []) {
    if (f.endsWith('.list')) out.push(...parseOneLine(readFileSync(join(dir, f), 'utf8')));
    if (f.endsWith('.sources')) out.push(...parseDeb822(readFileSync(join(dir, f), 'utf8')));
  }
  return out;
}

/** The Node version the repository pins (package-lock.json, devDependency `node`). */
export function pinnedNodeVersion(repo: string): string {
  const lock = JSON.parse(readFileSync(join(repo, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string }> };
  const v = lock.packages['node_modules/node']?.version;
  if (!v) throw new Error('package-lock.json has no node_modules/node: the devDependency "node" pins the image\'s Node');
  return v;
}

async function ensureRootfs(ctx: BaseContext): Promise<{ tar: string; sha256: string; seconds: number }> {
  const mirrors = debianMirrors(machineAptSources(), osCodename(readFileSync('/etc/os-release', 'utf8')));
  const inputs = { recipe: 1, suite: SUITE, arch: arch().deb, variant: 'minbase', include: INCLUDE, dpkg: DPKG_OPTS, mirrors: mirrorLines(mirrors, SUITE) };
  const key = sha256(JSON.stringify(inputs)).slice(0, 16);
  const dir = join(ctx.cache, 'rootfs');
  const tar = join(dir, `${SUITE}-${key}.tar`);
  const manifest = `${tar}.json`;
  if (existsSync(tar) && existsSync(manifest)) {
    return { tar, sha256: (JSON.parse(readFileSync(manifest, 'utf8')) as { sha256: string }).sha256, seconds: 0 };
  }
  mkdirSync(dir, { recursive: true });
  const t0 = Date.now();
  ctx.log(`[images] root filesystem: mmdebstrap ${SUITE} (${inputs.mirrors.length} mirror lines from the machine's apt sources)`);
  const tmp = `${tar}.${process.pid}.tmp.tar`; // mmdebstrap picks the format from the name
  const packages = `${tar}.${process.pid}.packages`;
  await run(
    'mmdebstrap',
    [
      '--quiet',
      '--format=tar',
      '--variant=minbase',
      `--architectures=${inputs.arch}`,
      `--include=${INCLUDE.join(',')}`,
      ...DPKG_OPTS.map((o) => `--dpkgopt=${o}`),
      `--customize-hook=chroot "$1" dpkg-query -W -f='\${Package} \${Version}\\n' > ${packages}`,
      SUITE,
      tmp,
      ...inputs.mirrors,
    ],
    { env: { SOURCE_DATE_EPOCH: '0' }, timeoutMs: 15 * 60_000, onLine: (l) => ctx.log(`[mmdebstrap] ${l}`) },
  );
  const digest = sha256(readFileSync(tmp));
  // The Debian archive moves (no snapshot service here): record what this tarball holds.
  const record = { inputs, sha256: digest, built: new Date().toISOString(), packages: readFileSync(packages, 'utf8').trim().split('\n') };
  writeFileSync(manifest, JSON.stringify(record, null, 2));
  rmSync(packages, { force: true });
  renameSync(tmp, tar);
  return { tar, sha256: digest, seconds: (Date.now() - t0) / 1000 };
}

async function ensureNode(ctx: BaseContext, version: string): Promise<{ dir: string; integrity: string; seconds: number }> {
  const pkg = `node-linux-${arch().node}`;
  const dir = join(ctx.cache, 'node', `${pkg}-${version}`);
  const stamp = join(dir, 'integrity');
  if (existsSync(stamp)) return { dir, integrity: readFileSync(stamp, 'utf8').trim(), seconds: 0 };
  const t0 = Date.now();
  ctx.log(`[images] Node ${version}: npm pack ${pkg}@${version}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const expected = JSON.parse(await run('npm', ['view', '--json', `${pkg}@${version}`, 'dist.integrity'], { timeoutMs: 60_000 })) as string;
  const packed = JSON.parse(await run('npm', ['pack', '--json', '--pack-destination', dir, `${pkg}@${version}`], { timeoutMs: 5 * 60_000 })) as { filename: string }[];
  const tgz = join(dir, packed[0]!.filename);
  const actual = `sha512-${createHash('sha512').update(readFileSync(tgz)).digest('base64')}`;
  if (actual !== expected) throw new Error(`${pkg}@${version}: integrity ${actual} does not match the registry's ${expected}`);
  await run('tar', ['-xzf', tgz, '-C', dir, '--strip-components=1', 'package/bin/node', 'package/LICENSE'], { timeoutMs: 120_000 });
  rmSync(tgz);
  writeFileSync(stamp, `${expected}\n`);
  return { dir, integrity: expected, seconds: (Date.now() - t0) / 1000 };
}

/** `localhost/modeldock/node:<version>-<suite>-<key>`, built unless it exists. */
export async function ensureBaseImage(ctx: BaseContext): Promise<BaseImage> {
  const nodeVersion = pinnedNodeVersion(ctx.repo);
  const rootfs = await ensureRootfs(ctx);
  const node = await ensureNode(ctx, nodeVersion);
  const containerfile = [
    '# Generated by scripts/images/base.ts: Debian (mmdebstrap) + the Node binary of the npm platform package.',
    'FROM scratch',
    'ADD rootfs.tar /',
    'COPY node /usr/local/bin/node',
    'COPY LICENSE /usr/local/share/doc/node/LICENSE',
    'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    `ENV NODE_VERSION=${nodeVersion}`,
    'CMD ["node"]',
    '',
  ].join('\n');
  const key = sha256(JSON.stringify({ rootfs: rootfs.sha256, node: node.integrity, containerfile })).slice(0, 16);
  const ref = `localhost/modeldock/node:${nodeVersion}-${SUITE}-${key}`;
  if (await imageExists(ctx.env, ref)) return { ref, nodeVersion, rootfsSha256: rootfs.sha256, seconds: { rootfs: rootfs.seconds, node: node.seconds, image: 0 } };

  const t0 = Date.now();
  const context = join(ctx.cache, 'base', key);
  rmSync(context, { recursive: true, force: true });
  mkdirSync(context, { recursive: true });
  linkSync(rootfs.tar, join(context, 'rootfs.tar'));
  linkSync(join(node.dir, 'bin/node'), join(context, 'node'));
  linkSync(join(node.dir, 'LICENSE'), join(context, 'LICENSE'));
  writeFileSync(join(context, 'Containerfile'), containerfile);
  ctx.log(`[images] base image ${ref}`);
  await buildah(ctx.env, ['-f', join(context, 'Containerfile'), '-t', ref, context]);
  rmSync(context, { recursive: true, force: true });
  return { ref, nodeVersion, rootfsSha256: rootfs.sha256, seconds: { rootfs: rootfs.seconds, node: node.seconds, image: (Date.now() - t0) / 1000 } };
}

export async function imageExists(env: Record<string, string>, ref: string): Promise<boolean> {
  return run('podman', ['image', 'exists', ref], { env, timeoutMs: 60_000 }).then(
    () => true,
    () => false,
  );
}

/** `buildah bud` with chroot isolation and a zero timestamp (same inputs → same image id). */
export async function buildah(env: Record<string, string>, args: string[]): Promise<void> {
  await run('buildah', ['bud', '--isolation', 'chroot', '--timestamp', '0', '--quiet', ...args], { env, timeoutMs: 15 * 60_000 });
}
