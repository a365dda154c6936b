// A real Kubernetes node for the local stack: containerd, the kubelet, kube-proxy and kube-router's
// NetworkPolicy controller (built by build.sh), runc, the CNI plugins, iptables and ipset (Debian),
// in a network namespace of the stack's own (node-net.ts), next to the KWOK node. ModelDock's
// images reach it through a registry on the host's end of the veth, which docker.io names
// resolve to (no outside registry); the pause image is imported. Root only. What it touches on
// the host and how teardown restores it: docs/local-stack.md, "The real node".
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildImages } from '../images/build.ts';
import { imageCacheDir, containersEnv } from '../images/containers.ts';
import { freePort } from './net.ts';
import {
  CGROUP_ROOT,
  cniConflist,
  containerdConfig,
  dockerIoHosts,
  kubeletConfig,
  kubeletWrapper,
  kubeProxyConfig,
  kubeRouterArgs,
  kubeRouterKubeconfig,
  kubeRouterRbac,
  KUBE_ROUTER_SA,
  NODE_NET,
  nodeKubeconfig,
  nodePaths,
  PAUSE_IMAGE,
  REAL_NODE,
  REAL_NODE_LABEL,
  type NodeLayout,
} from './node-config.ts';
import { diffHostState, readHostState, removeStrayPaths, type HostState } from './node-host.ts';
import { createNodeNetwork, netnsPath, removeHostLink, sh } from './node-net.ts';
import { startProcess, StackError, type ManagedProcess } from './proc.ts';

// stack.ts exports repoRoot too, but stack.ts imports this module.
const repoRoot = () => resolve(fileURLToPath(new URL('../..', import.meta.url)));

/** The images the node's registry serves, as docker.io names (what ModelDock's manifests and tenants write). */
export const NODE_IMAGES = ['modeldock/mock-model:0.1.0', 'modeldock/controller:0.1.0'] as const;
/**
 * The mock model with the ENV of a CUDA base image (`NVIDIA_VISIBLE_DEVICES=all`): what a tenant's
 * image built on CUDA carries. Derived from the mock (one buildah config), again only when the mock changed.
 */
export const CUDA_ENV_IMAGE = 'modeldock/mock-model-cuda-env:0.1.0';

export interface NodePki {
  dir: string;
  ca: string;
  kubeletCert: string;
  kubeletKey: string;
  /** The API server's client certificate towards the kubelet (system:masters). */
  apiClientCert: string;
  apiClientKey: string;
  /** The node's bearer token (tokens.csv: system:node:<name>, group system:nodes). */
  token: string;
}

/** The node's namespace holder; started before the control plane, whose API server binds the host's end of the veth. */
export interface NodeNetwork {
  holder: ManagedProcess;
}

export async function startNodeNetwork(runDir: string, logDir: string): Promise<NodeNetwork> {
  const holder = await startProcess({ name: 'node-netns', command: 'unshare', args: ['--net', '--', 'sleep', 'infinity'], logDir, ready: async () => true }, runDir);
  try {
    // `unshare` has made its namespace once its /proc entry points elsewhere than ours.
    const ours = readlinkSync('/proc/self/ns/net');
    for (let i = 0; readlinkSync(netnsPath(holder.pid)) === ours; i++) {
      if (i > 100) throw new StackError('node-netns', 'unshare --net did not make a network namespace');
      await sleep(20);
    }
    await createNodeNetwork(holder.pid);
  } catch (err) {
    await holder.stop();
    throw err;
  }
  return { holder };
}

export async function createNodePki(dir: string): Promise<NodePki> {
  mkdirSync(dir, { recursive: true });
  const f = (n: string) => join(dir, n);
  const days = ['-days', '7'];
  await sh('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', f('ca.key'), '-out', f('ca.crt'), '-subj', '/CN=modeldock-node-ca', ...days]);
  const issue = async (name: string, subj: string, ext: string) => {
    writeFileSync(f(`${name}.ext`), ext);
    await sh('openssl', ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', f(`${name}.key`), '-out', f(`${name}.csr`), '-subj', subj]);
    await sh('openssl', ['x509', '-req', '-in', f(`${name}.csr`), '-CA', f('ca.crt'), '-CAkey', f('ca.key'), '-CAcreateserial', '-out', f(`${name}.crt`), '-extfile', f(`${name}.ext`), ...days]);
  };
  await issue('kubelet', `/CN=system:node:${REAL_NODE}/O=system:nodes`, `subjectAltName=IP:${NODE_NET.bridgeIp},DNS:${REAL_NODE}\nextendedKeyUsage=serverAuth\n`);
  await issue('apiserver-kubelet-client', '/O=system:masters/CN=kube-apiserver-kubelet-client', 'extendedKeyUsage=clientAuth\n');
  return {
    dir,
    ca: f('ca.crt'),
    kubeletCert: f('kubelet.crt'),
    kubeletKey: f('kubelet.key'),
    apiClientCert: f('apiserver-kubelet-client.crt'),
    apiClientKey: f('apiserver-kubelet-client.key'),
    token: randomBytes(24).toString('hex'),
  };
}

/** RBAC a node needs where no Node authorizer runs (the stack authorizes with RBAC alone). */
const NODE_RBAC = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: modeldock-nodes}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:node"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: "system:nodes"}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: modeldock-node-proxier}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:node-proxier"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: "system:nodes"}]
---
# Projected ServiceAccount tokens: the Node authorizer grants this, plain RBAC's system:node does not.
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: modeldock-node-tokens}
rules: [{apiGroups: [""], resources: [serviceaccounts/token], verbs: [create]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: modeldock-node-tokens}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: modeldock-node-tokens}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: "system:nodes"}]
`;

export interface RealNodeOptions {
  binDir: string;
  /** The directory holding docker-registry (scripts/testenv/ensure-node-tools.sh). */
  registryDir: string;
  runDir: string;
  logDir: string;
  network: NodeNetwork;
  pki: NodePki;
  /** The admin kubeconfig, the API server's URL and CA. */
  kubeconfig: string;
  apiServer: string;
  apiCa: string;
  log: (msg: string) => void;
}

export interface RealNode {
  name: string;
  /** The registry (host:port) that docker.io names resolve to. */
  registry: string;
  /** The node's network namespace, for nsenter --net= (/proc/<holder pid>/ns/net). */
  netns: string;
  processes: ManagedProcess[];
  /** Kills every container, stops the node's processes and removes its mounts, cgroups and network. */
  stop(): Promise<void>;
}

export async function startRealNode(opts: RealNodeOptions): Promise<RealNode> {
  const dir = join(opts.runDir, 'node');
  const p = nodePaths(dir);
  const holder = opts.network.holder.pid;
  const netns = `--net=${netnsPath(holder)}`;
  const processes: ManagedProcess[] = [];
  const started = async (m: Promise<ManagedProcess>) => {
    const proc = await m;
    processes.push(proc);
    return proc;
  };
  const registryPort = await freePort();
  const registry = `${NODE_NET.hostIp}:${registryPort}`;
  const layout: NodeLayout = {
    dir,
    binDir: opts.binDir,
    registry,
    apiServer: opts.apiServer,
    apiCa: opts.apiCa,
    nodeToken: opts.pki.token,
    pki: { ca: opts.pki.ca, kubeletCert: opts.pki.kubeletCert, kubeletKey: opts.pki.kubeletKey },
  };
  const stop = () => stopRealNode(dir, processes, opts.network);
  try {
    for (const d of [p.containerdRoot, p.containerdState, p.runcRoot, p.cniConf, p.cniIpam, p.kubeletRoot, p.podLogs, join(p.certsD, 'docker.io')]) mkdirSync(d, { recursive: true });
    writeFileSync(p.containerdConfig, containerdConfig(layout));
    writeFileSync(join(p.certsD, 'docker.io', 'hosts.toml'), dockerIoHosts(registry));
    writeFileSync(join(p.cniConf, '10-modeldock.conflist'), cniConflist(layout));
    writeFileSync(p.kubeletConfig, kubeletConfig(layout));
    writeFileSync(p.kubeconfig, nodeKubeconfig(layout));
    writeFileSync(p.proxyConfig, kubeProxyConfig(layout));
    const wrapper = join(dir, 'kubelet.sh');
    writeFileSync(wrapper, kubeletWrapper(layout), { mode: 0o755 });
    await applyYaml(opts, 'rbac.yaml', NODE_RBAC);

    const path = `${opts.binDir}:/usr/sbin:/usr/bin:/sbin:/bin`;
    const ctr = (args: string[], timeoutMs = 120_000) => sh(join(opts.binDir, 'ctr'), ['--address', p.containerdSock, '--namespace', 'k8s.io', ...args], timeoutMs);
    await started(
      startProcess(
        {
          name: 'containerd',
          command: 'nsenter',
          args: [netns, '--', join(opts.binDir, 'containerd'), '--config', p.containerdConfig],
          env: { PATH: path },
          logDir: opts.logDir,
          ready: async () => existsSync(p.containerdSock) && (await ctr(['version'], 5_000).then(() => true)),
        },
        opts.runDir,
      ),
    );
    await Promise.all([ctr(['images', 'import', await pauseArchive(opts.binDir)]), started(startRegistry(opts, dir, registry))]);
    await pushImages(registry, opts.log);

    // The kubelet's root is a shared mount, so the volumes it mounts in its own mount namespace reach containerd's.
    await sh('mount', ['--bind', p.kubeletRoot, p.kubeletRoot]);
    await sh('mount', ['--make-shared', p.kubeletRoot]);
    createCgroupRoot();
    await started(
      startProcess(
        {
          name: 'kubelet',
          command: 'nsenter',
          args: [
            netns,
            '--',
            'unshare',
            '-m',
            '--propagation',
            'unchanged',
            '--',
            'bash',
            wrapper,
            `--config=${p.kubeletConfig}`,
            `--kubeconfig=${p.kubeconfig}`,
            `--root-dir=${p.kubeletRoot}`,
            `--hostname-override=${REAL_NODE}`,
            `--node-ip=${NODE_NET.bridgeIp}`,
            `--node-labels=${REAL_NODE_LABEL}=true`,
            '--v=1',
          ],
          env: { PATH: path },
          logDir: opts.logDir,
          timeoutMs: 90_000,
          ready: async () => nodeReady(opts),
        },
        opts.runDir,
      ),
    );
    await started(
      startProcess(
        {
          name: 'kube-proxy',
          command: 'nsenter',
          args: [netns, '--', join(opts.binDir, 'kube-proxy'), `--config=${p.proxyConfig}`, '--v=1'],
          env: { PATH: path },
          logDir: opts.logDir,
          ready: async () => (await sh('nsenter', [netns, '--', 'nft', 'list', 'table', 'ip', 'kube-proxy'], 5_000)).includes('chain'),
        },
        opts.runDir,
      ),
    );
    await started(startKubeRouter(opts, layout, netns, path));
    opts.log(`[stack] real node ${REAL_NODE} Ready (containerd, kubelet, kube-proxy, kube-router's NetworkPolicy controller in network namespace of pid ${holder}; registry ${registry})`);
    return { name: REAL_NODE, registry, netns: netnsPath(holder), processes, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function applyYaml(opts: Pick<RealNodeOptions, 'binDir' | 'kubeconfig' | 'runDir'>, name: string, yaml: string): Promise<void> {
  const file = join(opts.runDir, 'node', name);
  writeFileSync(file, yaml);
  await sh(join(opts.binDir, 'kubectl'), [`--kubeconfig=${opts.kubeconfig}`, 'apply', '-f', file], 60_000);
}

/** How long kube-router's ServiceAccount token lives: as long as the node's certificates (createNodePki). */
const KUBE_ROUTER_TOKEN_TTL = '168h';

/**
 * kube-router's NetworkPolicy controller in the node's namespace, as its own ServiceAccount (read
 * only). It owns the namespace's iptables filter table (it rewrites the whole table on each sync)
 * and its ipsets; both go with the namespace. Ready once its first sync has written the rule that
 * accepts what the policies allow, at the end of its top-level chains.
 */
async function startKubeRouter(opts: RealNodeOptions, layout: NodeLayout, netns: string, path: string): Promise<ManagedProcess> {
  const p = nodePaths(layout.dir);
  await applyYaml(opts, 'kube-router-rbac.yaml', kubeRouterRbac());
  const token = await sh(join(opts.binDir, 'kubectl'), [`--kubeconfig=${opts.kubeconfig}`, '-n', KUBE_ROUTER_SA.namespace, 'create', 'token', KUBE_ROUTER_SA.name, `--duration=${KUBE_ROUTER_TOKEN_TTL}`], 30_000);
  writeFileSync(p.kubeRouterKubeconfig, kubeRouterKubeconfig(layout, token.trim()), { mode: 0o600 });
  const env = { PATH: path, XTABLES_LOCKFILE: p.xtablesLock };
  return startProcess(
    {
      name: 'kube-router',
      command: 'nsenter',
      args: [netns, '--', join(opts.binDir, 'kube-router'), ...kubeRouterArgs(layout)],
      env,
      logDir: opts.logDir,
      ready: async () => {
        const rules = await sh('nsenter', [netns, '--', 'env', `XTABLES_LOCKFILE=${env.XTABLES_LOCKFILE}`, 'iptables-save', '-t', 'filter'], 5_000);
        return /-A KUBE-ROUTER-FORWARD .*explicitly ACCEPT traffic that comply to network policies/.test(rules);
      },
    },
    opts.runDir,
  );
}

async function nodeReady(opts: Pick<RealNodeOptions, 'binDir' | 'kubeconfig'>): Promise<boolean> {
  const out = await sh(join(opts.binDir, 'kubectl'), [`--kubeconfig=${opts.kubeconfig}`, 'get', 'node', REAL_NODE, '-o', "jsonpath={.status.conditions[?(@.type=='Ready')].status}"], 10_000);
  return out.trim() === 'True';
}

function startRegistry(opts: RealNodeOptions, dir: string, addr: string): Promise<ManagedProcess> {
  // The registry's data is kept across runs in the cache: an unchanged image is not pushed again.
  const data = join(imageCacheDir(), 'node-registry');
  mkdirSync(data, { recursive: true });
  const config = join(dir, 'registry.yml');
  writeFileSync(config, `version: 0.1\nlog: {level: warn}\nstorage: {filesystem: {rootdirectory: "${data}"}, delete: {enabled: true}}\nhttp: {addr: "${addr}"}\n`);
  return startProcess(
    {
      name: 'registry',
      command: join(opts.registryDir, 'docker-registry'),
      args: ['serve', config],
      logDir: opts.logDir,
      ready: async () => (await fetch(`http://${addr}/v2/`, { signal: AbortSignal.timeout(2000) })).ok,
    },
    opts.runDir,
  );
}

/**
 * The registry gets ModelDock's images as docker.io names, from the project's podman storage. They
 * are built first (`npm run images`: input-keyed, ~1 s when nothing changed), so a fresh machine's
 * `npm run dev` and every test run serve the images of the code in the checkout.
 */
async function pushImages(registry: string, log: (m: string) => void): Promise<void> {
  await buildImages({ repo: repoRoot(), log });
  await cudaEnvImage();
  for (const image of [...NODE_IMAGES, CUDA_ENV_IMAGE]) {
    const t0 = Date.now();
    await inStorage('podman', ['push', '--quiet', '--tls-verify=false', `localhost/${image}`, `docker://${registry}/${image}`]);
    log(`[stack] real node: ${image} in its registry (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  }
}

/** buildah or podman on the project's container storage (images/containers.ts). */
const inStorage = (tool: 'buildah' | 'podman', args: string[]): Promise<string> =>
  sh('env', [...Object.entries(containersEnv()).map(([k, v]) => `${k}=${v}`), tool, ...args], 180_000);

/** CUDA_ENV_IMAGE, derived again only when the mock image it is derived from changed (its id is a label). */
async function cudaEnvImage(): Promise<void> {
  const label = 'modeldock.io/derived-from';
  const base = (await inStorage('podman', ['image', 'inspect', '--format', '{{.Id}}', `localhost/${NODE_IMAGES[0]}`])).trim();
  const derived = await inStorage('podman', ['image', 'inspect', '--format', `{{index .Labels "${label}"}}`, `localhost/${CUDA_ENV_IMAGE}`]).catch(() => '');
  if (derived.trim() === base) return;
  const c = (await inStorage('buildah', ['from', '--pull=false', `localhost/${NODE_IMAGES[0]}`])).trim();
  try {
    await inStorage('buildah', ['config', '--env', 'NVIDIA_VISIBLE_DEVICES=all', '--env', 'NVIDIA_DRIVER_CAPABILITIES=compute,utility', '--label', `${label}=${base}`, c]);
    await inStorage('buildah', ['commit', '--quiet', c, `localhost/${CUDA_ENV_IMAGE}`]);
  } finally {
    await inStorage('buildah', ['rm', c]);
  }
}

/** The pause image as an OCI archive, built once per pause binary with buildah (FROM scratch). */
async function pauseArchive(binDir: string): Promise<string> {
  const bin = join(binDir, 'pause');
  const key = (await sh('sha256sum', [bin])).slice(0, 12);
  const archive = join(imageCacheDir(), `pause-${key}.oci.tar`);
  if (existsSync(archive)) return archive;
  const buildah = (args: string[]) => inStorage('buildah', args);
  const c = (await buildah(['from', 'scratch'])).trim();
  try {
    await buildah(['copy', c, bin, '/pause']);
    await buildah(['config', '--entrypoint', '["/pause"]', '--user', '65535:65535', c]);
    await buildah(['commit', '--timestamp', '0', c, PAUSE_IMAGE]);
    await buildah(['push', PAUSE_IMAGE, `oci-archive:${archive}.tmp:${PAUSE_IMAGE}`]);
  } finally {
    await buildah(['rm', c]);
  }
  await sh('mv', [`${archive}.tmp`, archive]);
  return archive;
}

/** The cgroup hierarchies here (v1 controllers, and the unified one of a hybrid layout): the kubelet makes its root in each. */
function hierarchies(): string[] {
  return readdirSync('/sys/fs/cgroup').filter((h) => existsSync(join('/sys/fs/cgroup', h, 'cgroup.procs')));
}

function createCgroupRoot(): void {
  for (const h of hierarchies()) {
    const d = join('/sys/fs/cgroup', h, CGROUP_ROOT);
    mkdirSync(d, { recursive: true });
    if (h === 'cpuset') {
      // A new v1 cpuset starts empty: give it the parent's CPUs and memory nodes.
      for (const f of ['cpuset.cpus', 'cpuset.mems']) writeFileSync(join(d, f), readFileSync(join('/sys/fs/cgroup/cpuset', f), 'utf8'));
    }
  }
}

/** Every process in the node's cgroup subtree (the containers and their pause processes). */
function cgroupPids(): number[] {
  const pids = new Set<number>();
  const walk = (d: string) => {
    if (!existsSync(d)) return;
    for (const l of readFileSync(join(d, 'cgroup.procs'), 'utf8').split('\n')) if (l) pids.add(Number(l));
    for (const e of readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) walk(join(d, e.name));
  };
  for (const h of hierarchies()) walk(join('/sys/fs/cgroup', h, CGROUP_ROOT));
  return [...pids];
}

/** rmdir, deepest first: a cgroup directory goes once it has no children (its control files are not real files). */
function removeCgroupRoot(): void {
  const walk = (d: string) => {
    if (!existsSync(d)) return;
    for (const e of readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) walk(join(d, e.name));
    rmdirSync(d);
  };
  for (const h of hierarchies()) walk(join('/sys/fs/cgroup', h, CGROUP_ROOT));
}

/** Processes whose command line names the node's directory (containerd's shims: `-address <dir>/…`). */
function pidsNaming(dir: string): number[] {
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    const pid = Number(e);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir)) out.push(pid);
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

function killAll(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone meanwhile */
    }
  }
}

/** Mount points under dir, deepest first. */
function mountsUnder(dir: string): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .filter((m) => m === dir || m.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
}

async function stopRealNode(dir: string, processes: ManagedProcess[], network: NodeNetwork): Promise<void> {
  const errors: string[] = [];
  const step = async (what: string, f: () => unknown) => {
    try {
      await f();
    } catch (err) {
      errors.push(`${what}: ${(err as Error).message}`);
    }
  };
  // The kubelet first (it would restart what we kill), then every container, then the runtime.
  for (const name of ['kube-router', 'kube-proxy', 'kubelet']) await step(`stop ${name}`, () => processes.find((p) => p.name === name)?.stop());
  for (let i = 0; i < 50; i++) {
    const pids = [...cgroupPids(), ...pidsNaming(dir)].filter((pid) => !processes.some((p) => p.pid === pid));
    if (pids.length === 0) break;
    killAll(pids);
    await sleep(100);
  }
  await step('stop the rest', () => Promise.all(processes.splice(0).reverse().map((p) => p.stop())));
  for (const m of mountsUnder(dir)) await step(`umount ${m}`, () => sh('umount', ['-l', m]));
  await step('cgroups', () => removeCgroupRoot());
  await step('network namespace', () => network.holder.stop());
  await step('host link', () => removeHostLink());
  if (existsSync(dir)) await step('node dir', () => rmSync(join(dir, 'containerd'), { recursive: true, force: true }));
  if (errors.length) throw new StackError('real-node', `teardown: ${errors.join('; ')}`);
}

/** What must exist before the control plane starts when a real node joins: its network, its PKI, and the host as it was. */
export interface RealNodePrep {
  network: NodeNetwork;
  pki: NodePki;
  registryDir: string;
  hostBefore: HostState;
}

/** Tools (apt), the host's state, the node's network namespace and PKI. On failure nothing is left. */
export async function prepareRealNode(runDir: string, logDir: string): Promise<RealNodePrep> {
  if (process.getuid?.() !== 0) throw new StackError('real-node', 'a real node needs root (containerd, the kubelet and network namespaces)');
  const tools = await sh('bash', [join(repoRoot(), 'scripts/testenv/ensure-node-tools.sh')], 600_000);
  const registryDir = tools.trim().split('\n').at(-1) ?? '';
  const nodeDir = join(runDir, 'node');
  const hostBefore = await readHostState([nodeDir]);
  const network = await startNodeNetwork(runDir, logDir);
  try {
    return { network, pki: await createNodePki(join(nodeDir, 'pki')), registryDir, hostBefore };
  } catch (err) {
    await network.holder.stop();
    throw err;
  }
}

/** After the node's teardown: what it wrote outside its roots is removed, and the host must read as before. */
export async function checkHostRestored(runDir: string, before: HostState): Promise<void> {
  removeStrayPaths(before);
  const diff = diffHostState(before, await readHostState([join(runDir, 'node')]));
  if (diff.length) throw new StackError('real-node', `the host is not as the node found it:\n${diff.join('\n')}`);
}

/**
 * What a hard-killed run of a real node leaves once its processes are gone (the run dir's pids are
 * stopped first): mounts under its run dir, and — unless a real node still runs (its veth exists) —
 * the kubelet's cgroup subtree with whatever still runs in it.
 */
export async function clearStaleNode(runDir: string): Promise<void> {
  for (const m of mountsUnder(runDir)) await sh('umount', ['-l', m]);
  const links = await sh('ip', ['-o', 'link', 'show']).catch(() => '');
  if (links.includes(`${NODE_NET.hostIf}@`) || links.includes(`${NODE_NET.hostIf}:`)) return;
  for (let i = 0; cgroupPids().length > 0; i++) {
    if (i > 50) throw new StackError('real-node', `processes of an earlier real node still run in its cgroup /${CGROUP_ROOT}: ${cgroupPids().join(', ')}`);
    killAll(cgroupPids());
    await sleep(100);
  }
  removeCgroupRoot();
}
