// DATABASE_URL for the operator commands (migrate, tenant): the environment first, then the
// Worker's local secrets file .dev.vars, so `wrangler dev` and the commands agree.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));

export function parseDotVars(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!m?.[1] || line.trim().startsWith('#')) continue;
    let value = m[2] ?? '';
    if ((value.startsWith('"') && value.endsWith('"')) || (value.startsWith("'") && value.endsWith("'"))) value = value.slice(1, -1);
    out[m[1]] = value;
  }
  return out;
}

export function databaseUrlFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  if (env.DATABASE_URL) return env.DATABASE_URL;
  const file = join(repoRoot, '.dev.vars');
  const url = existsSync(file) ? parseDotVars(readFileSync(file, 'utf8')).DATABASE_URL : undefined;
  if (!url) throw new Error('DATABASE_URL is not set (export it, or put DATABASE_URL=… in .dev.vars)');
  return url;
}
