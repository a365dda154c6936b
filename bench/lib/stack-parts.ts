// The local stack's processes by part (B12): etcd, or the cluster a control-plane process serves.
/** Which part of the stack a process is: etcd, a cluster (by its apiserver's prefix or its kubeconfig), or none of them. */
export function partOf(cmdline: readonly string[], runDir: string): string | null {
  const exe = cmdline[0]?.split('/').at(-1) ?? '';
  if (exe === 'etcd') return 'etcd';
  if (!['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok'].includes(exe)) return null;
  const args = cmdline.join(' ');
  const further = /--etcd-prefix=\/clusters\/([a-z0-9-]+)\/registry/.exec(args) ?? new RegExp(`${runDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/clusters/([a-z0-9-]+)/kubeconfig`).exec(args);
  return further ? further[1]! : 'c1';
}
