// A tenant's space in the cluster: its namespace (controller/tenant/namespace.ts), the
// ResourceQuota mirroring its hard quota in the ledger (quota.ts) and its NetworkPolicies
// (network-policy.ts). The controller is the one writer of all three. `ensure` runs before a
// tenant's ModelService is created (delivery); `sync` runs periodically on the leader over every
// tenant namespace of the cache, so an operator's change of a quota (`npm run tenant -- set`)
// or of the network settings reaches the cluster within one period, and an object edited or
// deleted by hand is put back. Writes happen only when the cached object differs from the
// desired one (runtime/apply.ts), so a steady state costs one ledger read per tenant per period.
import { setTimeout as sleep } from 'node:timers/promises';
import { LABELS, type Amounts } from '../../schema/model-service.ts';
import { tenantNamespace } from '../../schema/tenant-namespace.ts';
import { createOrPatch } from '../runtime/apply.ts';
import { isAlreadyExists } from '../runtime/errors.ts';
import type { Informer, KubeObject } from '../runtime/informer.ts';
import { paths, type KubeClient } from '../runtime/kube.ts';
import type { Logger } from '../runtime/log.ts';
import { foreignNamespace, tenantLabels, tenantNamespaceObject, type Namespace } from './namespace.ts';
import { tenantNetworkPolicies, type NetworkPolicy, type TenantNetworkSettings } from './network-policy.ts';
import { tenantResourceQuota, type ResourceQuota } from './quota.ts';

/** A namespace under a tenant's name that is not this tenant's: retried, never adopted (an operator resolves it). */
export class ForeignNamespace extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ForeignNamespace';
  }
}

export interface TenantSpaceOptions {
  /** TENANT_NAMESPACE_PREFIX (schema/tenant-namespace.ts). */
  prefix: string;
  /** INSTANCE: the installation label, when several share a cluster. */
  instance: string | undefined;
  /** MAX_REPLICAS: the most replicas one admission may ask for (the pods quota). */
  maxReplicas: number;
  network: TenantNetworkSettings;
  /** The tenant's hard quota in the ledger (one single-shard statement naming the tenant). */
  readHard: (tenant: string, signal: AbortSignal) => Promise<Partial<Amounts>>;
  /** How long a delivery trusts the hard quota read last (default 30 s); `sync` always reads it afresh. */
  hardTtlMs?: number;
  /** How long a delivery waits for a new ResourceQuota's status (default 10 s; then it is retried). */
  quotaStatusTimeoutMs?: number;
  now?: () => number;
  cache: { namespaces: Informer<Namespace>; quotas: Informer<ResourceQuota>; policies: Informer<NetworkPolicy> };
  log: Logger;
}

export class TenantSpaces {
  readonly #o: TenantSpaceOptions;
  readonly #hard = new Map<string, { at: number; hard: Partial<Amounts> }>();

  constructor(o: TenantSpaceOptions) {
    this.#o = o;
  }

  namespaceFor(tenant: string): string {
    return tenantNamespace(tenant, this.#o.prefix);
  }

  /** The tenant's namespace, quota and policies exist as desired (created or corrected); throws ForeignNamespace if its name is taken. */
  async ensure(tenant: string, client: KubeClient, signal: AbortSignal): Promise<void> {
    const name = this.namespaceFor(tenant);
    await this.#ensureNamespace(name, tenant, client);
    await this.#ensureContents(name, tenant, client, await this.#readHard(tenant, signal, this.#o.hardTtlMs ?? 30_000), signal);
  }

  /** Every tenant namespace in the cache: its quota re-read from the ledger, quota and policies corrected. One tenant's failure does not stop the others. */
  async sync(client: KubeClient, signal: AbortSignal): Promise<{ tenants: number; failed: number }> {
    let failed = 0;
    const spaces = this.#o.cache.namespaces.list().filter((ns) => !ns.metadata.deletionTimestamp);
    for (const ns of spaces) {
      signal.throwIfAborted();
      const tenant = ns.metadata.labels?.[LABELS.tenant];
      if (!tenant || ns.metadata.name !== this.namespaceFor(tenant)) continue; // not a namespace this configuration names
      try {
        await this.#ensureContents(ns.metadata.name, tenant, client, await this.#readHard(tenant, signal, 0), signal);
      } catch (err) {
        if (signal.aborted) throw err;
        failed++;
        this.#o.log.warn('tenant namespace not brought in step', { namespace: ns.metadata.name, tenant, err: err instanceof Error ? err.message : String(err) });
      }
    }
    return { tenants: spaces.length, failed };
  }

  async #ensureNamespace(name: string, tenant: string, client: KubeClient): Promise<void> {
    // Used only if it is this tenant's, whether found in the cache, read live or met on create.
    const ours = (live: Namespace | undefined): Namespace | undefined => {
      if (!live) return undefined;
      const foreign = foreignNamespace(live, tenant, this.#o.instance);
      if (foreign) throw new ForeignNamespace(foreign);
      if (live.metadata.deletionTimestamp) throw new ForeignNamespace(`namespace ${name} is being deleted`);
      return live;
    };
    // The cache holds only ModelDock's namespaces: a miss is read live before creating.
    const live = ours(this.#o.cache.namespaces.get('', name) ?? (await client.getOrUndefined<Namespace>(paths.namespace(name))));
    await this.#apply(client, paths.namespaces(), tenantNamespaceObject(name, tenant, this.#o.instance), live, { what: 'namespace', tenant }, ours);
  }

  /** The tenant's hard quota, from the ledger unless read within `ttlMs`. */
  async #readHard(tenant: string, signal: AbortSignal, ttlMs: number): Promise<Partial<Amounts>> {
    const now = (this.#o.now ?? Date.now)();
    const memo = this.#hard.get(tenant);
    if (memo && now - memo.at < ttlMs) return memo.hard;
    const hard = await this.#o.readHard(tenant, signal);
    this.#hard.set(tenant, { at: now, hard });
    return hard;
  }

  /**
   * Until kube-controller-manager has computed a new ResourceQuota's status, the API server refuses
   * every pod of the namespace ("status unknown for quota"): the first ModelService of a tenant
   * waits for it (the cache shows it within a second), instead of its pods failing to be created.
   */
  async #quotaComputed(namespace: string, quota: ResourceQuota, signal: AbortSignal): Promise<void> {
    const computed = () => {
      const hard = this.#o.cache.quotas.get(namespace, quota.metadata.name)?.status?.hard ?? {};
      return Object.keys(quota.spec?.hard ?? {}).every((k) => k in hard);
    };
    const deadline = (this.#o.now ?? Date.now)() + (this.#o.quotaStatusTimeoutMs ?? 10_000);
    while (!computed()) {
      if ((this.#o.now ?? Date.now)() >= deadline) throw new Error(`the ResourceQuota of namespace ${namespace} has no status yet (kube-controller-manager computes it)`);
      await sleep(100, undefined, { signal });
    }
  }

  async #ensureContents(namespace: string, tenant: string, client: KubeClient, hard: Partial<Amounts>, signal: AbortSignal): Promise<void> {
    const quota = tenantResourceQuota(namespace, tenant, hard, { maxReplicas: this.#o.maxReplicas, instance: this.#o.instance });
    await this.#apply(client, paths.resourceQuotas(namespace), quota, this.#o.cache.quotas.get(namespace, quota.metadata.name), { what: 'quota', tenant, hard: quota.spec?.hard });
    await this.#quotaComputed(namespace, quota, signal);
    for (const policy of tenantNetworkPolicies(namespace, this.#o.network, tenantLabels(tenant, this.#o.instance))) {
      await this.#apply(client, paths.networkPolicies(namespace), policy, this.#o.cache.policies.get(namespace, policy.metadata.name), { what: 'network policy', tenant });
    }
  }

  /**
   * createOrPatch with the cache's view (logged when it writes); an object the cache had not seen
   * yet (AlreadyExists) is read live, passed through `check`, and patched.
   */
  async #apply<T extends KubeObject>(
    client: KubeClient,
    collection: string,
    desired: T,
    cached: T | undefined,
    log: { what: string; tenant: string; hard?: unknown },
    check: (live: T | undefined) => T | undefined = (live) => live,
  ): Promise<void> {
    let result;
    try {
      ({ result } = await createOrPatch({ client, collection, desired, live: cached }));
    } catch (err) {
      if (cached || !isAlreadyExists(err)) throw err;
      ({ result } = await createOrPatch({ client, collection, desired, live: check(await client.getOrUndefined<T>(`${collection}/${desired.metadata.name}`)) }));
    }
    const { what, ...fields } = log;
    if (result !== 'unchanged') this.#o.log.info(`tenant ${what} ${result}`, { namespace: desired.metadata.namespace ?? desired.metadata.name, name: desired.metadata.name, ...fields });
  }
}
