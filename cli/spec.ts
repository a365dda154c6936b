// The body of POST /requests from a spec file (YAML or JSON) and flags; flags win over the file.
// Only the shape is put together here: the API validates the content and names bad fields.
import { parse as parseYaml } from 'yaml';
import { UsageError, type SpecFlags } from './args.ts';

export type SpecBody = Record<string, unknown>;

/** Parses a spec file's text (YAML is a superset of JSON, so one parser reads both). */
export function parseSpecFile(text: string, path: string): SpecBody {
  let doc: unknown;
  try {
    doc = parseYaml(text, { prettyErrors: false, maxAliasCount: 0 });
  } catch (err) {
    throw new UsageError(`${path}: not valid YAML or JSON: ${(err as Error).message.split('\n')[0]}`);
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new UsageError(`${path}: must hold one object (name, image, replicas, resources, …)`);
  return doc as SpecBody;
}

/** Merges flags over the file's object. */
export function specBody(file: SpecBody, flags: SpecFlags): SpecBody {
  const body: SpecBody = { ...file };
  if (flags.name !== undefined) body.name = flags.name;
  if (flags.image !== undefined) body.image = flags.image;
  // --autoscale sets the range and target; any other knob of the file's autoscale is kept.
  if (flags.autoscale) body.autoscale = { ...(isObject(file.autoscale) ? file.autoscale : {}), ...flags.autoscale };
  if (flags.replicas !== undefined) body.replicas = flags.replicas;
  // An autoscaled admission starts at its minimum unless told otherwise (the API wants replicas within the range).
  if (body.replicas === undefined) body.replicas = isObject(body.autoscale) && typeof body.autoscale.minReplicas === 'number' ? body.autoscale.minReplicas : 1;
  if (flags.port !== undefined) body.port = flags.port;
  if (flags.readinessPath !== undefined) body.readinessPath = flags.readinessPath;
  const fileResources = isObject(file.resources) ? file.resources : {};
  const resources: Record<string, unknown> = { ...fileResources };
  if (flags.cpu !== undefined) resources.cpu = flags.cpu;
  if (flags.memory !== undefined) resources.memory = flags.memory;
  if (flags.gpu !== undefined) resources['nvidia.com/gpu'] = flags.gpu;
  if (Object.keys(resources).length || file.resources !== undefined) body.resources = isObject(file.resources) || file.resources === undefined ? resources : file.resources;
  if (flags.env.length) {
    const fromFile = Array.isArray(file.env) ? (file.env as unknown[]) : [];
    const set = new Map<string, unknown>();
    for (const e of fromFile) if (isObject(e) && typeof e.name === 'string') set.set(e.name, e);
    for (const kv of flags.env) {
      const i = kv.indexOf('=');
      set.set(kv.slice(0, i), { name: kv.slice(0, i), value: kv.slice(i + 1) });
    }
    body.env = [...set.values()];
  }
  if (flags.args.length) body.args = flags.args;
  if (flags.queue) body.onShortQuota = 'queue';
  if (flags.queueTtlSeconds !== undefined) body.queueTtlSeconds = flags.queueTtlSeconds;
  return body;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
