// Environment variable names no tenant may set (pure): they reach into the node's container
// runtime or defeat the device plugin. Part of the workload schema, so both the admission API
// (400) and the controller's spec check at delivery refuse them.
/**
 * Environment variables that reach into the node's container runtime rather than the model: the
 * NVIDIA container toolkit reads NVIDIA_VISIBLE_DEVICES (and the other NVIDIA_* variables) to
 * decide which GPUs to mount, so a container setting `NVIDIA_VISIBLE_DEVICES=all` on a GPU node
 * would get every GPU of the node without requesting (or being charged for) one; AMD's runtime
 * reads AMD_VISIBLE_DEVICES the same way. CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES and
 * HIP_VISIBLE_DEVICES re-map the devices a process sees and would defeat the device plugin's
 * assignment. docs/admission-api.md lists them.
 */
const FORBIDDEN_ENV: ReadonlyArray<{ test: (name: string) => boolean; what: string }> = [
  { test: (n) => n.startsWith('NVIDIA_'), what: 'NVIDIA_* variables are read by the node\'s NVIDIA container runtime (device injection)' },
  { test: (n) => n === 'AMD_VISIBLE_DEVICES', what: 'read by the node\'s AMD container runtime (device injection)' },
  {
    test: (n) => ['CUDA_VISIBLE_DEVICES', 'ROCR_VISIBLE_DEVICES', 'HIP_VISIBLE_DEVICES', 'GPU_DEVICE_ORDINAL'].includes(n),
    what: 'it re-maps the GPUs the device plugin assigned',
  },
];

/** Why an environment variable name is refused, or undefined. */
export function forbiddenEnvName(name: string): string | undefined {
  const hit = FORBIDDEN_ENV.find((f) => f.test(name.toUpperCase()));
  return hit ? `${name} may not be set: ${hit.what}` : undefined;
}
