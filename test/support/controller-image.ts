// The controller IMAGE (npm run images) as a real container against the local stack: podman with
// runc and host networking (the stack listens on loopback), a read-only root filesystem as in
// k8s/controller.yaml, the image's own user (no --user), the ServiceAccount kubeconfig mounted
// read-only. Secrets go in through podman's environment (`-e NAME`), never on its command line.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { inject } from 'vitest';
import { containersEnv } from '../../scripts/images/containers.ts';
import { run } from '../../scripts/images/run.ts';
import { freePort } from '../../scripts/testenv/net.ts';
import { startProcess, type ManagedProcess } from '../../scripts/testenv/proc.ts';
import { installEnv } from '../../scripts/testenv/install.ts';

export interface ControllerContainer {
  name: string;
  container: string;
  port: number;
  proc: ManagedProcess;
  /** Runs a command inside the running container and returns its stdout, trimmed. */
  exec(cmd: string[]): Promise<string>;
  stop(): Promise<void>;
}

export interface ControllerContainerOptions {
  name: string;
  image: string;
  namespace: string;
  /** A kubeconfig authenticating as the controller's ServiceAccount. */
  kubeconfig: string;
  env?: Record<string, string>;
}

export async function startControllerContainer(opts: ControllerContainerOptions): Promise<ControllerContainer> {
  const stack = inject('stack');
  const podmanEnv = containersEnv();
  const port = await freePort();
  // Named per stack run dir: a leftover of a hard-killed run in this worktree is removed first.
  const container = `modeldock-${opts.name}-${createHash('sha256').update(stack.runDir).digest('hex').slice(0, 8)}`;
  await run('podman', ['rm', '-f', '--ignore', container], { env: podmanEnv, timeoutMs: 60_000 });

  // The container runs as 10001 and sees no host path: give it a self-contained, readable copy
  // of the kubeconfig (CA inlined; the token is short-lived).
  const dir = join(stack.runDir, 'containers', opts.name);
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  writeFileSync(join(dir, 'kubeconfig'), selfContained(opts.kubeconfig), { mode: 0o644 });

  const env: Record<string, string> = {
    KUBECONFIG: '/etc/modeldock/kubeconfig',
    ...installEnv(opts.namespace),
    METRICS_PORT: String(port),
    POD_NAME: opts.name,
    // Required with the ledger: any registry (`*`) unless the test sets its list.
    ALLOWED_IMAGE_REGISTRIES: '*',
    ...opts.env,
  };
  const proc = await startProcess(
    {
      name: opts.name,
      command: 'podman',
      args: [
        'run', '--rm', '--name', container,
        '--network', 'host',
        '--read-only',
        '--label', 'modeldock.test=e2e',
        '-v', `${dir}:/etc/modeldock:ro`,
        ...Object.keys(env).flatMap((k) => ['-e', k]),
        opts.image,
      ],
      env: { ...podmanEnv, ...env },
      logDir: stack.logDir,
      ready: async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).ok,
      timeoutMs: 90_000,
    },
    stack.runDir,
  );
  const exec = async (cmd: string[]) => (await run('podman', ['exec', container, ...cmd], { env: podmanEnv, timeoutMs: 30_000 })).trim();
  return {
    name: opts.name,
    container,
    port,
    proc,
    exec,
    async stop() {
      await run('podman', ['stop', '--ignore', '-t', '10', container], { env: podmanEnv, timeoutMs: 60_000 }).catch(() => undefined);
      await proc.stop();
    },
  };
}

/** The kubeconfig with every CA file inlined as data (a container cannot read host paths). */
function selfContained(file: string): string {
  const kc = new KubeConfig();
  kc.loadFromFile(file);
  const clusters = kc.clusters.map((c) => (c.caFile ? { ...c, caFile: undefined, caData: readFileSync(c.caFile).toString('base64') } : c));
  kc.loadFromOptions({ clusters, users: kc.users, contexts: kc.contexts, currentContext: kc.currentContext });
  return kc.exportConfig();
}
