// Writes k8s/base/crd.yaml from schema/crd.ts (the zod schemas of the ModelService).
//   node scripts/gen-crd.ts           write k8s/base/crd.yaml
//   node scripts/gen-crd.ts --check   exit 1 when the checked-in file differs from the output
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { crdYaml } from '../schema/crd.ts';

export const CRD_FILE = fileURLToPath(new URL('../k8s/base/crd.yaml', import.meta.url));

/** The checked-in CRD, or '' when there is none. */
export function checkedInCrd(): string {
  try {
    return readFileSync(CRD_FILE, 'utf8');
  } catch {
    return '';
  }
}

if (import.meta.main) {
  const want = crdYaml();
  if (process.argv.includes('--check')) {
    if (checkedInCrd() !== want) {
      console.error(`${CRD_FILE} is out of date with schema/model-service.ts: run \`npm run gen:crd\` and commit it.`);
      process.exit(1);
    }
    console.log(`${CRD_FILE} is current.`);
  } else {
    writeFileSync(CRD_FILE, want);
    console.log(`wrote ${CRD_FILE}`);
  }
}
