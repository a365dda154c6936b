// The installed packages a set of dependencies needs, read from package-lock.json (v2/v3
// `packages` map): Node's resolution walked over lockfile paths. The mock image ships only
// its own dependencies (prom-client, zod and what they pull in), cut from the one root
// lockfile instead of a second lockfile to keep in step. Pure.

export interface LockPackage {
  version?: string;
  dev?: boolean;
  optional?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

export interface Lockfile {
  packages: Record<string, LockPackage>;
}

/** Where Node finds `name` when required from the package installed at `from` ('' = the root). */
export function resolveIn(lock: Lockfile, from: string, name: string): string | undefined {
  let dir = from;
  for (;;) {
    const candidate = `${dir ? `${dir}/` : ''}node_modules/${name}`;
    if (lock.packages[candidate]) return candidate;
    if (!dir) return undefined;
    const cut = dir.lastIndexOf('node_modules/');
    dir = cut <= 0 ? '' : dir.slice(0, cut - 1);
  }
}

/**
 * Every lockfile path (`node_modules/…`) needed by `roots` (dependency names of the root
 * package), sorted. A required dependency that is not installed throws; optional and
 * optional-peer ones that are absent are skipped.
 */
export function closure(lock: Lockfile, roots: string[]): string[] {
  const seen = new Set<string>();
  const visit = (from: string, name: string, optional: boolean): void => {
    const path = resolveIn(lock, from, name);
    if (!path) {
      if (optional) return;
      throw new Error(`package-lock.json: ${name} (needed by ${from || 'the root package'}) is not installed`);
    }
    const pkg = lock.packages[path]!;
    if (seen.has(path) || (optional && pkg.dev)) return; // an optional peer present only for development
    seen.add(path);
    for (const dep of Object.keys(pkg.dependencies ?? {})) visit(path, dep, false);
    for (const dep of Object.keys(pkg.optionalDependencies ?? {})) visit(path, dep, true);
    for (const dep of Object.keys(pkg.peerDependencies ?? {})) visit(path, dep, pkg.peerDependenciesMeta?.[dep]?.optional === true);
  };
  for (const root of roots) visit('', root, false);
  return [...seen].sort();
}

/** The exact installed version of each root dependency (for the image's package.json). */
export function pinnedVersions(lock: Lockfile, roots: string[]): Record<string, string> {
  return Object.fromEntries(
    roots.map((name) => {
      const v = lock.packages[`node_modules/${name}`]?.version;
      if (!v) throw new Error(`package-lock.json: ${name} is not a top-level dependency`);
      return [name, v];
    }),
  );
}
