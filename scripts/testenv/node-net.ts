// The real node's network, kept off the host's: a network namespace of the stack's own, joined to
// the host by a veth pair. The host gets two routes (the pod and the Service range, both into the
// veth), added before any pod exists, so no packet for them can leave by the host's default
// route. Forwarding and bridge netfilter are turned on in the namespace only; the host's sysctls,
// routes, default route, eth0, nftables ruleset, iptables and ipsets are never touched. The
// namespace has no default route: a pod reaches the host's veth address (the API server, the
// registry) and nothing beyond it.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { NODE_NET } from './node-config.ts';
import { StackError } from './proc.ts';

const exec = promisify(execFile);

/** Runs a command (no shell), 30 s deadline; a failure names the command and its stderr. */
export async function sh(cmd: string, args: string[], timeoutMs = 30_000): Promise<string> {
  try {
    return (await exec(cmd, args, { timeout: timeoutMs, maxBuffer: 1 << 24 })).stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new StackError('real-node', `${cmd} ${args.join(' ')}: ${e.stderr?.trim() || e.message}`);
  }
}

/** The node's network namespace, held by a process of the stack (`unshare --net`): no mount under /run/netns, and when every process in it is gone, the kernel removes it with its veth end, the bridge and kube-proxy's tables. */
export const netnsPath = (holderPid: number) => `/proc/${holderPid}/ns/net`;

/** Runs a command inside the node's network namespace. */
export const inNetns = (holderPid: number, cmd: string, args: string[], timeoutMs?: number) =>
  sh('nsenter', [`--net=${netnsPath(holderPid)}`, '--', cmd, ...args], timeoutMs);

export async function createNodeNetwork(holderPid: number): Promise<void> {
  const n = NODE_NET;
  const links = await sh('ip', ['-o', 'link', 'show']);
  if (new RegExp(`: ${n.hostIf}[@:]`).test(links)) {
    throw new StackError('real-node', `the link ${n.hostIf} exists: another real node runs on this machine`);
  }
  const ns = (cmd: string, args: string[]) => inNetns(holderPid, cmd, args);
  await sh('ip', ['link', 'add', n.hostIf, 'type', 'veth', 'peer', 'name', n.nsIf, 'netns', String(holderPid)]);
  await sh('ip', ['addr', 'add', `${n.hostIp}/${n.linkPrefix}`, 'dev', n.hostIf]);
  await sh('ip', ['link', 'set', n.hostIf, 'up']);
  // The pod and Service ranges go into the namespace, never out by the default route.
  await sh('ip', ['route', 'add', n.podCidr, 'via', n.nsIp, 'dev', n.hostIf]);
  await sh('ip', ['route', 'add', n.serviceCidr, 'via', n.nsIp, 'dev', n.hostIf]);
  await ns('ip', ['link', 'set', 'lo', 'up']);
  await ns('ip', ['addr', 'add', `${n.nsIp}/${n.linkPrefix}`, 'dev', n.nsIf]);
  await ns('ip', ['link', 'set', n.nsIf, 'up']);
  await ns('ip', ['link', 'add', n.bridge, 'type', 'bridge']);
  await ns('ip', ['addr', 'add', `${n.bridgeIp}/24`, 'dev', n.bridge]);
  await ns('ip', ['link', 'set', n.bridge, 'up']);
  // The namespace's own forwarding (a per-namespace sysctl): pods ↔ veth ↔ host.
  await ns('sysctl', ['-q', '-w', 'net.ipv4.ip_forward=1']);
  // Traffic between two pods on the bridge passes the namespace's iptables too (per-namespace
  // since Linux 5.3), so kube-router's NetworkPolicy rules see it. The default is 1 in a new
  // namespace; set anyway, as kube-router's own router would (not run here) on a node.
  await ns('sysctl', ['-q', '-w', 'net.bridge.bridge-nf-call-iptables=1']);
}

/** The host's end of the veth (and with it its routes), if the kernel has not removed it with the namespace yet. */
export async function removeHostLink(): Promise<void> {
  const present = async () => new RegExp(`: ${NODE_NET.hostIf}[@:]`).test(await sh('ip', ['-o', 'link', 'show']));
  if (!(await present())) return;
  // The kernel may reap it between the look and the delete: only a link still there is an error.
  await sh('ip', ['link', 'del', NODE_NET.hostIf]).catch(async (err: unknown) => {
    if (await present()) throw err;
  });
}
