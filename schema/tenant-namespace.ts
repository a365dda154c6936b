// The namespace a tenant's ModelServices, Deployments, Services and pods live in: one per tenant,
// created and owned by the controller (controller/tenant/space.ts), named deterministically from
// the tenant so that every replica of the controller, before and after a restart, agrees on it
// without storing it. docs/tenancy.md documents the layout.
import { createHash } from 'node:crypto';
import { z } from 'zod';

/** The default prefix of tenant namespaces (controller env TENANT_NAMESPACE_PREFIX). */
export const DEFAULT_TENANT_NAMESPACE_PREFIX = 'md-';
const MAX_NAME = 63;
const HASH_CHARS = 10;
const PREFIX = /^[a-z0-9]([-a-z0-9]*)?$/;

/** Why `prefix` cannot start tenant namespace names, or undefined. */
export function invalidNamespacePrefix(prefix: string): string | undefined {
  if (!PREFIX.test(prefix)) return `"${prefix}" must be lower-case letters, digits and "-", starting with a letter or digit`;
  if (prefix.length > MAX_NAME - HASH_CHARS - 2) return `"${prefix}" is longer than ${MAX_NAME - HASH_CHARS - 2} characters`;
  return undefined;
}

/** TENANT_NAMESPACE_PREFIX as the controller and the gateway read it: default `md-`, checked. */
export const namespacePrefixSetting = z
  .string()
  .default(DEFAULT_TENANT_NAMESPACE_PREFIX)
  .superRefine((p, ctx) => {
    const why = invalidNamespacePrefix(p);
    if (why) ctx.addIssue({ code: 'custom', message: why });
  });

/**
 * `<prefix><tenant>` when that is a DNS-1123 label of at most 63 characters; otherwise the prefix,
 * as much of the tenant as fits, `-` and 10 hex characters of the tenant's SHA-256 — so two
 * tenants never share a namespace unless their hashes collide. The controller also refuses a
 * namespace whose tenant label names another tenant (space.ts), so even then none is shared.
 * Tenants are DNS-1123 labels (functions/auth/keys.ts); the prefix is checked at start.
 */
export function tenantNamespace(tenant: string, prefix: string = DEFAULT_TENANT_NAMESPACE_PREFIX): string {
  const plain = `${prefix}${tenant}`;
  if (plain.length <= MAX_NAME) return plain;
  const hash = createHash('sha256').update(tenant).digest('hex').slice(0, HASH_CHARS);
  const head = `${prefix}${tenant}`.slice(0, MAX_NAME - HASH_CHARS - 1).replace(/-+$/, '');
  return `${head}-${hash}`;
}
