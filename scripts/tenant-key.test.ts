import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { keyForToken, parseKeyRing } from '../functions/auth/keys.ts';
import { newKeyLines } from './tenant.ts';

describe('npm run tenant -- key', () => {
  it('prints the key, its digest entry and the key id the Worker logs for it', async () => {
    const key = 'mdk_test-key-0123456789abcdef';
    const digest = createHash('sha256').update(key).digest('hex');
    const lines = await newKeyLines('acme', key);
    const id = /^key id \(in the Worker's request logs\): +([0-9a-f]{12})$/m.exec(lines.join('\n'))?.[1];
    const entry = /^ADMISSION_KEYS_JSON entry \(digest only\): (".*")$/m.exec(lines.join('\n'))?.[1];
    expect(entry).toBe(`"acme": "sha256:${digest}"`);
    // The printed entry is a valid key document in production, and the Worker names the key by the printed id.
    const ring = await parseKeyRing(`{${entry}}`, { digestsOnly: true });
    expect(await keyForToken(ring, key)).toEqual({ tenant: 'acme', keyId: id });
    expect(lines.filter((l) => l.includes(key))).toHaveLength(1); // the key is printed once, for the tenant
  });
});
