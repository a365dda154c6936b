// Which node `npm run dev` and `npm run stack` start: a real node (a kubelet with containerd, so
// the model really runs) wherever the machine allows it, else KWOK's fake node; a flag forces
// either. Pure: the caller passes what it knows of the machine.
export type NodeKind = 'real' | 'kwok';

export interface NodeChoice {
  kind: NodeKind;
  why: string;
}

export interface Machine {
  platform: string;
  /** process.getuid(), undefined where there is none (Windows). */
  uid: number | undefined;
  /** The command line's arguments after the script. */
  argv: readonly string[];
  /** MODELDOCK_NODE: real | kwok | unset. */
  env: string | undefined;
}

export const NODE_FLAGS = { real: '--real-node', kwok: '--kwok' } as const;

export function chooseNode(m: Machine): NodeChoice {
  const flagged = (Object.keys(NODE_FLAGS) as NodeKind[]).filter((k) => m.argv.includes(NODE_FLAGS[k]));
  if (flagged.length > 1) throw new Error(`${NODE_FLAGS.real} and ${NODE_FLAGS.kwok} exclude each other`);
  if (m.env !== undefined && m.env !== '' && m.env !== 'real' && m.env !== 'kwok') throw new Error(`MODELDOCK_NODE must be "real" or "kwok", not "${m.env}"`);
  const forced = flagged[0] ?? (m.env === 'real' || m.env === 'kwok' ? m.env : undefined);
  const how = flagged[0] ? NODE_FLAGS[flagged[0]] : `MODELDOCK_NODE=${m.env ?? ''}`;
  if (forced === 'kwok') return { kind: 'kwok', why: `${how}: KWOK's fake node (pods are simulated; no container runs)` };
  const blocker = m.platform !== 'linux' ? `not Linux (${m.platform})` : m.uid !== 0 ? 'not root (containerd, the kubelet and network namespaces need root)' : undefined;
  if (forced === 'real') {
    if (blocker) throw new Error(`${how}: a real node cannot start here: ${blocker}`);
    return { kind: 'real', why: `${how}: a real node (kubelet + containerd), next to KWOK's fake node` };
  }
  if (blocker) return { kind: 'kwok', why: `${blocker}: KWOK's fake node (pods are simulated; no container runs; ${NODE_FLAGS.real} needs Linux and root)` };
  return { kind: 'real', why: `Linux and root: a real node (kubelet + containerd) runs the model, next to KWOK's fake node (${NODE_FLAGS.kwok} for KWOK only)` };
}
