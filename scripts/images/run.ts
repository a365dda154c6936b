// One external command with a deadline: output captured, a failure throws with the command
// and the tail of its stderr. `onLine` streams stderr (progress) while it runs.
import { spawn } from 'node:child_process';

export class CommandError extends Error {
  constructor(command: string, reason: string, tail: string) {
    super(`${command}: ${reason}${tail ? `\n--- last lines ---\n${tail}` : ''}`);
    this.name = 'CommandError';
  }
}

export interface RunOptions {
  env?: Record<string, string>;
  cwd?: string;
  timeoutMs: number;
  onLine?: (line: string) => void;
}

export function run(command: string, args: string[], opts: RunOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => {
      err = (err + d.toString()).slice(-20_000);
      if (opts.onLine) for (const l of d.toString().split('\n')) if (l.trim()) opts.onLine(l);
    });
    const name = [command, ...args.slice(0, 2)].join(' ');
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(new CommandError(name, e.message, ''));
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      const tail = err.trimEnd().split('\n').slice(-25).join('\n');
      if (signal) reject(new CommandError(name, signal === 'SIGKILL' ? `no result within ${opts.timeoutMs} ms` : `killed by ${signal}`, tail));
      else if (code !== 0) reject(new CommandError(name, `exit code ${code}`, tail));
      else resolve(Buffer.concat(out).toString());
    });
  });
}

/** True when `command` runs (`--version` answers). */
export async function available(command: string): Promise<boolean> {
  return run(command, ['--version'], { timeoutMs: 15_000 }).then(
    () => true,
    () => false,
  );
}
