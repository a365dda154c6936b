// The Dockerfiles ship exactly what the programs load: the controller image copies the folders
// its two programs, controller/main.ts and gateway/main.ts, reach through their imports (no more,
// no fewer), the mock image needs
// mock/ only, and the versions the mock's docker-build stage installs are the lockfile's.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { shippedContainer } from '../../test/support/shipped-controller.ts';
import { repoRoot } from '../testenv/stack.ts';
import { importGraph, topFolders } from './import-graph.ts';
import { pinnedVersions, type Lockfile } from './lock-closure.ts';

const read = (f: string) => readFileSync(join(repoRoot, f), 'utf8');

/** Sources of the final stage's plain `COPY src… dest` lines (not --from). */
function finalStageCopies(dockerfile: string): string[] {
  const stages = dockerfile.split(/^FROM\s/m);
  return stages
    .at(-1)!
    .split('\n')
    .filter((l) => /^COPY\s/.test(l) && !l.includes('--from'))
    .flatMap((l) => l.trim().split(/\s+/).slice(1, -1));
}

/** The programs the controller image runs: its CMD, and the gateway (k8s/gateway/gateway.yaml's command). */
const CONTROLLER_IMAGE_ENTRIES = ['controller/main.ts', 'gateway/main.ts'];

describe('controller/Dockerfile', () => {
  it('copies exactly the folders its programs import', () => {
    const { files } = importGraph(repoRoot, CONTROLLER_IMAGE_ENTRIES);
    const sources = finalStageCopies(read('controller/Dockerfile')).filter((s) => s !== 'package.json');
    const under = (f: string, s: string) => f === s || f.startsWith(`${s}/`);
    expect(files.filter((f) => !sources.some((s) => under(f, s))), 'imported but not copied').toEqual([]);
    expect(sources.filter((s) => !files.some((f) => under(f, s))), 'copied but never imported').toEqual([]);
  });

  it('runs the controller as the shipped manifest does (the same Node flags)', () => {
    const cmd = /^CMD\s+(\[.*\])\s*$/m.exec(read('controller/Dockerfile'))?.[1];
    const command = shippedContainer().command;
    expect(command).toContain('controller/main.ts');
    expect(JSON.parse(cmd ?? 'null')).toEqual(command);
  });

  it('ships production dependencies that cover its imports', () => {
    const pkg = JSON.parse(read('package.json')) as { dependencies: Record<string, string> };
    expect(importGraph(repoRoot, CONTROLLER_IMAGE_ENTRIES).packages.filter((p) => !(p in pkg.dependencies))).toEqual([]);
  });
});

describe('mock/Dockerfile', () => {
  const { files, packages } = importGraph(repoRoot, ['mock/main.ts']);

  it('needs mock/ only', () => {
    expect(topFolders(files)).toEqual(['mock']);
  });

  it('installs the lockfile versions of exactly the packages the mock imports', () => {
    const lock = JSON.parse(read('package-lock.json')) as Lockfile;
    const installed = [...read('mock/Dockerfile').matchAll(/\s((?:@[\w.-]+\/)?[\w.-]+)@(\d[\w.-]*)/g)].map((m) => [m[1]!, m[2]!]);
    expect(Object.fromEntries(installed)).toEqual(pinnedVersions(lock, packages));
  });
});
