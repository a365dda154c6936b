import { expect, it } from 'vitest';
import { crdYaml } from '../schema/crd.ts';
import { checkedInCrd } from './gen-crd.ts';

it('the checked-in k8s/base/crd.yaml is the generator output (run `npm run gen:crd`)', () => {
  expect(checkedInCrd()).toBe(crdYaml());
});
