// What a result was measured on: date, cores, memory, load, and the versions that matter.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, freemem, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../../scripts/testenv/stack.ts';

export interface Machine {
  date: string;
  nproc: number;
  cpuModel: string;
  memoryGiB: number;
  freeGiB: number;
  load: string;
  versions: Record<string, string>;
  commit: string;
}

const pkgVersion = (name: string): string => {
  try {
    return (JSON.parse(readFileSync(join(repoRoot, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '?';
  }
};

function stackVersions(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of readFileSync(join(repoRoot, 'scripts/testenv/versions.env'), 'utf8').split('\n')) {
    const m = /^([A-Z_]+)_VERSION=(\S+)/.exec(line);
    if (m) out[(m[1] as string).toLowerCase().replace(/_/g, '-')] = m[2] as string;
  }
  return out;
}

function sh(cmd: string, args: string[]): string {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '?';
  }
}

export function machine(): Machine {
  const mariadb = sh('mariadb', ['--version']).replace(/^.*Distrib ([^,]+).*$/s, '$1').replace(/^.*from (\S+).*$/s, '$1');
  return {
    date: new Date().toISOString(),
    nproc: cpus().length,
    cpuModel: cpus()[0]?.model ?? '?',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    freeGiB: Math.round((freemem() / 2 ** 30) * 10) / 10,
    load: loadavg()
      .map((l) => l.toFixed(2))
      .join(' '),
    versions: {
      node: process.version,
      workerd: pkgVersion('workerd'),
      wrangler: pkgVersion('wrangler'),
      '@planetscale/database': pkgVersion('@planetscale/database'),
      '@kubernetes/client-node': pkgVersion('@kubernetes/client-node'),
      mysql2: pkgVersion('mysql2'),
      mariadb,
      ...stackVersions(),
    },
    commit: sh('git', ['-C', repoRoot, 'rev-parse', '--short', 'HEAD']),
  };
}

export const loadNow = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
