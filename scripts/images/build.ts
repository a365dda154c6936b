// `npm run images` as a library: both images built from their Dockerfiles with buildah (chroot
// isolation, private storage), on the base from base.ts, with production node_modules
// installed on the host (`npm ci --omit=dev`) and passed in as the DEPS_IMAGE stage. Every
// image is tagged with a key of its inputs, so an unchanged image is found, not rebuilt.
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildah, ensureBaseImage, imageExists, sha256, type BaseImage } from './base.ts';
import { containersEnv, imageCacheDir } from './containers.ts';
import { importGraph } from './import-graph.ts';
import { closure, pinnedVersions, type Lockfile } from './lock-closure.ts';
import { run } from './run.ts';

export type ImageName = 'controller' | 'mock-model';

export interface BuiltImage {
  name: ImageName;
  /** `localhost/modeldock/<name>:<package version>` */
  ref: string;
  /** The same image under its input key: `localhost/modeldock/<name>:src-<key>`. */
  keyRef: string;
  id: string;
  sizeBytes: number;
  /** False when the image for these inputs already existed. */
  built: boolean;
  seconds: number;
}

export interface BuildResult {
  base: BaseImage;
  images: BuiltImage[];
  seconds: number;
}

export interface BuildOptions {
  repo: string;
  only?: ImageName[];
  cache?: string;
  log?: (msg: string) => void;
}

interface ImageSpec {
  name: ImageName;
  dockerfile: string;
  /** Build context, relative to the repository. */
  context: string;
  /** Repository paths whose content is part of the image's key. */
  inputs: string[];
}

const SPECS: Record<ImageName, ImageSpec> = {
  controller: {
    name: 'controller',
    dockerfile: 'controller/Dockerfile',
    context: '.',
    inputs: ['.dockerignore', 'package.json', 'controller', 'gateway', 'schema', 'ledger'],
  },
  'mock-model': { name: 'mock-model', dockerfile: 'mock/Dockerfile', context: 'mock', inputs: ['mock'] },
};

/** Installs the tools when absent (apt-get, as root). */
export async function ensureTools(repo: string, log: (m: string) => void): Promise<void> {
  await run('bash', [join(repo, 'scripts/images/ensure-tools.sh')], { timeoutMs: 15 * 60_000, onLine: log });
}

export async function buildImages(opts: BuildOptions): Promise<BuildResult> {
  const t0 = Date.now();
  const log = opts.log ?? ((m: string) => console.error(m));
  const cache = opts.cache ?? imageCacheDir();
  await ensureTools(opts.repo, log);
  const env = containersEnv(cache);
  const base = await ensureBaseImage({ repo: opts.repo, cache, env, log });
  const lock = JSON.parse(readFileSync(join(opts.repo, 'package-lock.json'), 'utf8')) as Lockfile;
  const prod = await productionModules(opts.repo, cache, log);
  const images: BuiltImage[] = [];
  for (const name of opts.only ?? (['controller', 'mock-model'] as const)) {
    const deps = name === 'controller' ? await controllerDeps(env, prod) : await mockDeps(env, opts.repo, cache, prod, lock);
    images.push(await buildImage(env, opts.repo, SPECS[name], base.ref, deps, log));
  }
  return { base, images, seconds: (Date.now() - t0) / 1000 };
}

/** `npm ci --omit=dev` on the host into a cache folder keyed by the lockfile. */
async function productionModules(repo: string, cache: string, log: (m: string) => void): Promise<{ dir: string; key: string }> {
  const pkg = readFileSync(join(repo, 'package.json'));
  const lock = readFileSync(join(repo, 'package-lock.json'));
  const key = sha256(Buffer.concat([pkg, lock])).slice(0, 16);
  const dir = join(cache, 'deps', key);
  if (existsSync(join(dir, '.installed'))) return { dir, key };
  log('[images] production node_modules: npm ci --omit=dev');
  const tmp = `${dir}.${process.pid}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  writeFileSync(join(tmp, 'package.json'), pkg);
  writeFileSync(join(tmp, 'package-lock.json'), lock);
  await run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: tmp, timeoutMs: 10 * 60_000 });
  writeFileSync(join(tmp, '.installed'), '');
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
  return { dir, key };
}

/** An image holding only /app/node_modules (and /app/package.json): the Dockerfile's DEPS_IMAGE. */
async function depsImage(env: Record<string, string>, ref: string, dir: string): Promise<string> {
  if (await imageExists(env, ref)) return ref;
  writeFileSync(join(dir, 'Containerfile'), 'FROM scratch\nCOPY package.json /app/package.json\nCOPY node_modules /app/node_modules\n');
  await buildah(env, ['-f', join(dir, 'Containerfile'), '-t', ref, dir]);
  return ref;
}

const controllerDeps = (env: Record<string, string>, prod: { dir: string; key: string }) =>
  depsImage(env, `localhost/modeldock/controller-deps:${prod.key}`, prod.dir);

/** The mock's packages (its imports' closure in the root lockfile), copied out of the production install. */
async function mockDeps(env: Record<string, string>, repo: string, cache: string, prod: { dir: string }, lock: Lockfile): Promise<string> {
  const roots = importGraph(repo, ['mock/main.ts']).packages;
  const paths = closure(lock, roots);
  const pkg = { name: 'modeldock-mock-model', version: '0.1.0', private: true, type: 'module', dependencies: pinnedVersions(lock, roots) };
  const key = sha256(JSON.stringify({ pkg, paths: paths.map((p) => [p, lock.packages[p]!.version]) })).slice(0, 16);
  const ref = `localhost/modeldock/mock-model-deps:${key}`;
  if (await imageExists(env, ref)) return ref;
  const dir = join(cache, 'mock-deps', key);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const p of paths) cpSync(join(prod.dir, p), join(dir, p), { recursive: true });
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  await depsImage(env, ref, dir);
  rmSync(dir, { recursive: true, force: true });
  return ref;
}

/** Content key of the repository paths an image is built from. */
function inputsKey(repo: string, paths: string[]): string {
  const files: string[] = [];
  const walk = (p: string): void => {
    const abs = join(repo, p);
    if (!existsSync(abs)) return;
    if (statSync(abs).isDirectory()) for (const e of readdirSync(abs).sort()) walk(join(p, e));
    else files.push(p);
  };
  paths.forEach(walk);
  return sha256(files.map((f) => `${f}\0${sha256(readFileSync(join(repo, f)))}`).join('\n'));
}

async function buildImage(env: Record<string, string>, repo: string, spec: ImageSpec, baseRef: string, depsRef: string, log: (m: string) => void): Promise<BuiltImage> {
  const t0 = Date.now();
  const version = (JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { version: string }).version;
  const key = sha256([inputsKey(repo, [spec.dockerfile, ...spec.inputs]), baseRef, depsRef].join('\n')).slice(0, 16);
  const ref = `localhost/modeldock/${spec.name}:${version}`;
  const keyRef = `localhost/modeldock/${spec.name}:src-${key}`;
  let built = false;
  if (!(await imageExists(env, keyRef))) {
    log(`[images] ${spec.name}: buildah bud -f ${spec.dockerfile} ${spec.context}`);
    await buildah(env, [
      '-f', join(repo, spec.dockerfile),
      '--build-arg', `BASE_IMAGE=${baseRef}`,
      '--build-arg', `DEPS_IMAGE=${depsRef}`,
      '-t', keyRef,
      join(repo, spec.context),
    ]);
    built = true;
  }
  await run('buildah', ['tag', keyRef, ref], { env, timeoutMs: 60_000 });
  const [id, size] = (await run('podman', ['image', 'inspect', '--format', '{{.Id}} {{.Size}}', keyRef], { env, timeoutMs: 60_000 })).trim().split(' ');
  return { name: spec.name, ref, keyRef, id: id!, sizeBytes: Number(size), built, seconds: (Date.now() - t0) / 1000 };
}
