// Runs the real `modeldock` CLI (node cli/main.ts) as a child process, with a deadline: with
// pipes (not a TTY), or inside a pseudo-terminal made by util-linux `script` (a TTY).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '../../scripts/testenv/stack.ts';

export interface CliResult {
  code: number | null;
  stdout: string;
  /** Empty for a TTY run: both streams go to the one terminal (in stdout). */
  stderr: string;
}

export interface CliRun {
  env?: Record<string, string | undefined>;
  stdin?: string;
  /** Run inside a pseudo-terminal (script -qefc). */
  tty?: boolean;
  timeoutMs?: number;
}

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
const CLI = join(repoRoot, 'cli/main.ts');

export function runCli(args: string[], opts: CliRun = {}): Promise<CliResult> {
  return startCli(args, opts).result;
}

export interface RunningCli {
  result: Promise<CliResult>;
  /** What it printed so far. */
  output(): { stdout: string; stderr: string };
}

/** Starts the CLI and returns at once: the caller can act on its output while it runs. */
export function startCli(args: string[], opts: CliRun = {}): RunningCli {
  const env: Record<string, string | undefined> = { PATH: process.env.PATH, HOME: process.env.HOME, LANG: 'C.UTF-8', TERM: 'xterm-256color', ...opts.env };
  for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k];
  const [cmd, argv] = opts.tty
    ? ['script', ['-qefc', [process.execPath, CLI, ...args].map(shellQuote).join(' '), '/dev/null']]
    : [process.execPath, [CLI, ...args]];
  let stdout = '';
  let stderr = '';
  const result = new Promise<CliResult>((resolve, reject) => {
    const child = spawn(cmd, argv as string[], { cwd: repoRoot, env: env as NodeJS.ProcessEnv, stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`modeldock ${args.join(' ')} did not finish within ${opts.timeoutMs ?? 60_000} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, opts.timeoutMs ?? 60_000);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    if (opts.stdin !== undefined) child.stdin.end(opts.stdin);
    else child.stdin.end();
  });
  return { result, output: () => ({ stdout, stderr }) };
}
