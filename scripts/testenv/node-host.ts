// What the real node could change on the host, read before it starts and after it stops, so a
// run proves it left the host as it found it: kernel sysctls, routes, links, the nftables
// ruleset, the legacy iptables tables and the ipsets (kube-router writes rules and sets, in the
// node's namespace only), mount points, the top of every cgroup hierarchy, and the paths a
// kubelet or containerd writes despite their configured roots.
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { KUBELET_SYSCTLS } from './node-config.ts';
import { sh } from './node-net.ts';

/** Sysctls the kubelet (KUBELET_SYSCTLS), kube-proxy, the bridge plugin or a careless script would change. */
const SYSCTLS = [
  'net/ipv4/ip_forward',
  'net/ipv6/conf/all/forwarding',
  'net/ipv4/conf/all/route_localnet',
  'net/ipv4/conf/all/rp_filter',
  'net/bridge/bridge-nf-call-iptables',
  'net/netfilter/nf_conntrack_max',
  ...KUBELET_SYSCTLS,
];

/** Paths the kubelet, containerd, runc or the CNI plugins write outside their configured roots. */
export const STRAY_PATHS = [
  '/var/lib/kubelet',
  '/var/log/containers',
  '/var/log/pods',
  '/run/containerd',
  '/var/lib/containerd',
  '/var/lib/cni',
  '/run/nri',
  '/run/netns',
  '/etc/cni',
  '/opt/cni',
];

const CGROUPS = '/sys/fs/cgroup';

/**
 * What other parts of a test run may change meanwhile, and the node never does: podman (the
 * controller-image suite, `npm run images`) mounts overlays under its storage in the cache dir
 * and makes its `libpod_parent` cgroup. Mount points are compared under the system's own trees.
 */
const MOUNT_ROOTS = ['/run', '/var', '/proc', '/sys', '/etc', '/opt', '/dev', '/tmp'];
const OTHERS_CGROUPS = /\/libpod_parent$/;

export interface HostState {
  sysctls: Record<string, string>;
  routes: string;
  links: string[];
  nftables: string;
  /** `iptables-legacy-save` without its comments and counters ("" where it is not installed); iptables-nft's rules are in `nftables`. */
  iptablesLegacy: string;
  /** `ipset list -n` ("" where ipset is not installed). */
  ipsets: string;
  mounts: string[];
  cgroups: string[];
  paths: string[];
}

/** `extraRoots`: more trees whose mount points count (the node's own directory). */
export async function readHostState(extraRoots: string[] = []): Promise<HostState> {
  const sysctls: Record<string, string> = {};
  for (const s of SYSCTLS) {
    const f = `/proc/sys/${s}`;
    if (existsSync(f)) sysctls[s] = readFileSync(f, 'utf8').trim();
  }
  const [routes4, routes6, links, nftables, iptablesLegacy, ipsets] = await Promise.all([
    sh('ip', ['-4', 'route', 'show', 'table', 'all']),
    sh('ip', ['-6', 'route', 'show', 'table', 'all']),
    sh('ip', ['-o', 'link', 'show']),
    sh('nft', ['list', 'ruleset']),
    optionalTool('iptables-legacy-save', []).then(withoutCounters),
    optionalTool('ipset', ['list', '-n']),
  ]);
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split(' ')[4] ?? '')
    .filter((m) => extraRoots.some((r) => m === r || m.startsWith(`${r}/`)) || MOUNT_ROOTS.some((r) => m === r || m.startsWith(`${r}/`)));
  const cgroups = readdirSync(CGROUPS).flatMap((h) => {
    const dir = join(CGROUPS, h);
    try {
      return readdirSync(dir, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => `${h}/${e.name}`)
        .filter((c) => !OTHERS_CGROUPS.test(c));
    } catch {
      return []; // a file at the top (cgroup v2's cgroup.* files), not a hierarchy
    }
  });
  return {
    sysctls,
    routes: routes4 + routes6,
    links: links.split('\n').filter(Boolean).map((l) => l.split(':')[1]?.trim().split('@')[0] ?? l),
    nftables,
    iptablesLegacy,
    ipsets,
    mounts: mounts.sort(),
    cgroups: cgroups.sort(),
    paths: STRAY_PATHS.filter((p) => existsSync(p)),
  };
}

/** A tool's output, or "" when the tool is not installed (a failing tool is still an error). */
async function optionalTool(cmd: string, args: string[]): Promise<string> {
  const path = ['/usr/sbin', '/sbin', '/usr/bin', '/bin'].map((d) => join(d, cmd)).find((f) => existsSync(f));
  return path ? sh(path, args) : '';
}

/** iptables-save output without its dated comments and packet counters, so two readings compare. */
export function withoutCounters(save: string): string {
  return save
    .split('\n')
    .filter((l) => !l.startsWith('#'))
    .map((l) => l.replace(/ \[\d+:\d+\]$/, ''))
    .join('\n');
}

/** Every difference between two readings, one line each (empty: the host is as it was). */
export function diffHostState(before: HostState, after: HostState): string[] {
  const out: string[] = [];
  for (const k of new Set([...Object.keys(before.sysctls), ...Object.keys(after.sysctls)])) {
    if (before.sysctls[k] !== after.sysctls[k]) out.push(`sysctl ${k}: ${before.sysctls[k] ?? '(absent)'} → ${after.sysctls[k] ?? '(absent)'}`);
  }
  if (before.routes !== after.routes) out.push(`routes changed:\n${before.routes}→\n${after.routes}`);
  if (before.nftables !== after.nftables) out.push(`nftables ruleset changed:\n${after.nftables}`);
  if (before.iptablesLegacy !== after.iptablesLegacy) out.push(`iptables (legacy) changed:\n${after.iptablesLegacy}`);
  if (before.ipsets !== after.ipsets) out.push(`ipsets changed:\n${after.ipsets}`);
  const sets: Array<[string, string[], string[]]> = [
    ['link', before.links, after.links],
    ['mount', before.mounts, after.mounts],
    ['cgroup', before.cgroups, after.cgroups],
    ['path', before.paths, after.paths],
  ];
  for (const [what, b, a] of sets) {
    for (const x of a) if (!b.includes(x)) out.push(`${what} added: ${x}`);
    for (const x of b) if (!a.includes(x)) out.push(`${what} removed: ${x}`);
  }
  return out;
}

/** Removes what the node wrote outside its roots: the stray paths that did not exist before it started. */
export function removeStrayPaths(before: HostState): void {
  for (const p of STRAY_PATHS) if (!before.paths.includes(p)) rmSync(p, { recursive: true, force: true });
}
