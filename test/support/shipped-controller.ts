// What k8s/base/controller.yaml ships for the controller container, read from the manifest itself
// so that a benchmark runs (and judges) the controller as users run it, and follows the manifest
// when it changes: its Node flags, its literal env values and its memory limit; and so that a test
// checks that the image's CMD runs it alike.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { repoRoot } from '../../scripts/testenv/stack.ts';
import { memoryMiB } from '../../schema/quantity.ts';

interface ShippedContainer {
  command?: string[];
  env?: Array<{ name: string; value?: string }>;
  resources?: { limits?: { memory?: string } };
}

let container: ShippedContainer | undefined;

/** The manifest's controller container, read once per process (every bench controller's start asks for it). */
export function shippedContainer(): ShippedContainer {
  container ??= readContainer();
  return container;
}

function readContainer(): ShippedContainer {
  for (const doc of parseAllDocuments(readFileSync(join(repoRoot, 'k8s/base/controller.yaml'), 'utf8'))) {
    const d = doc.toJS() as { kind?: string; spec?: { template?: { spec?: { containers?: ShippedContainer[] } } } } | null;
    const c = d?.kind === 'Deployment' ? d.spec?.template?.spec?.containers?.[0] : undefined;
    if (c) return c;
  }
  throw new Error('k8s/base/controller.yaml has no Deployment with a container');
}

/** The shipped literal values of `names` (a name the manifest does not set is absent: the controller's default). */
export function shippedEnv<N extends string>(names: readonly N[]): Partial<Record<N, string>> {
  const env = shippedContainer().env ?? [];
  const out: Partial<Record<N, string>> = {};
  for (const n of names) {
    const value = env.find((e) => e.name === n)?.value;
    if (value !== undefined) out[n] = value;
  }
  return out;
}

/** The Node flags of the container's command (`node <flags…> controller/main.ts`). */
export function shippedNodeFlags(): string[] {
  const command = shippedContainer().command ?? [];
  if (command[0] !== 'node' || command.at(-1) !== 'controller/main.ts') throw new Error(`k8s/base/controller.yaml's command is not node … controller/main.ts: ${JSON.stringify(command)}`);
  return command.slice(1, -1);
}

/** The container's resources.limits.memory in MiB (NaN when the manifest sets none). */
export function shippedMemoryLimitMiB(): number {
  const limit = shippedContainer().resources?.limits?.memory;
  return limit === undefined ? Number.NaN : memoryMiB(limit);
}
