// Writes k8s/base/crd.yaml from schema/crd.ts (the zod schemas of the ModelService).
//   node scripts/gen-crd.ts           write k8s/base/crd.yaml
//   node scripts/gen-crd.ts --check   exit 1 when the checked-in file differs from the output
import { fileURLToPath } from 'node:url';
import { crdYaml } from '../schema/crd.ts';
import { checkedIn, generatorMain } from './generated-file.ts';

export const CRD_FILE = fileURLToPath(new URL('../k8s/base/crd.yaml', import.meta.url));

/** The checked-in CRD, or '' when there is none. */
export const checkedInCrd = (): string => checkedIn(CRD_FILE);

if (import.meta.main) generatorMain(CRD_FILE, crdYaml(), 'schema/model-service.ts', 'gen:crd');
