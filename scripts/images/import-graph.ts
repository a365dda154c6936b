// What a Node entry point loads: the repository files reachable through relative imports,
// and the npm packages it names. The image builds use it to ship exactly the folders and
// packages a program needs (and a test holds the Dockerfiles to it).
import { readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';

// Static `import … from '…'`, `export … from '…'`, side-effect `import '…'` and `import('…')`.
const SPECIFIER = /(?:^|[\s;])((?:import|export)\s[^'"]*?)from\s*['"]([^'"]+)['"]|(?:^|[\s;])import\s*\(?\s*['"]([^'"]+)['"]/gm;

/**
 * The module specifiers one source text loads at run time (comments are not stripped: keep
 * imports out of comments). `import type …` / `export type …` are erased by type stripping.
 */
export function specifiers(source: string): string[] {
  return [...source.matchAll(SPECIFIER)].filter((m) => !/^(import|export)\s+type\s/.test(m[1] ?? '')).map((m) => (m[2] ?? m[3])!);
}

/** The npm package a bare specifier names (`@scope/name/sub` → `@scope/name`); undefined for relative and `node:` ones. */
export function packageName(spec: string): string | undefined {
  if (spec.startsWith('.') || spec.startsWith('/') || spec.startsWith('node:')) return undefined;
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

export interface ImportGraph {
  /** Repository-relative paths of every file reached, sorted. */
  files: string[];
  /** npm packages named anywhere in those files, sorted. */
  packages: string[];
}

/** Walks relative imports from `entries` (repository-relative paths) under `root`. */
export function importGraph(root: string, entries: string[], read: (path: string) => string = (p) => readFileSync(p, 'utf8')): ImportGraph {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string): void => {
    const rel = relative(root, file);
    if (files.has(rel)) return;
    files.add(rel);
    for (const spec of specifiers(read(file))) {
      const pkg = packageName(spec);
      if (pkg) packages.add(pkg);
      else if (spec.startsWith('.')) visit(resolve(dirname(file), spec));
    }
  };
  for (const e of entries) visit(resolve(root, e));
  return { files: [...files].sort(), packages: [...packages].sort() };
}

/** The top-level folders of `files` (`controller/main.ts` → `controller`). */
export function topFolders(files: string[]): string[] {
  return [...new Set(files.filter((f) => f.includes('/')).map((f) => f.split('/')[0]!))].sort();
}
