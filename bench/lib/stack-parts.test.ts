import { describe, expect, it } from 'vitest';
import { partOf } from './stack-parts.ts';

describe('B12 partOf: which part of the stack a process is', () => {
  const run = '/work/.stack/bench';
  it.each([
    [['/bin/etcd', '--name=n0'], 'etcd'],
    [['/bin/kube-apiserver', '--etcd-servers=http://127.0.0.1:1'], 'c1'],
    [['/bin/kube-apiserver', '--etcd-prefix=/clusters/c2/registry'], 'c2'],
    [['/bin/kube-controller-manager', `--kubeconfig=${run}/kubeconfig`], 'c1'],
    [['/bin/kube-scheduler', `--kubeconfig=${run}/clusters/c3/kubeconfig`], 'c3'],
    [['/bin/kwok', `--kubeconfig=${run}/clusters/c2/kubeconfig`], 'c2'],
    [['/bin/ps-http-sim', '-listen-port=1'], null],
    [['/usr/bin/node', 'controller/main.ts'], null],
  ])('%j → %s', (cmdline, part) => {
    expect(partOf(cmdline, run)).toBe(part);
  });
});
