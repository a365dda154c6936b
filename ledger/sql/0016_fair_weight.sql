-- Issue 30: the cross-tenant fair pick (ledger/fair-pick.ts, ledger/queue-fair.ts). When a cluster
-- room frees up, the shard's tenants with a queue are offered it lowest weighted dominant share
-- first; fair_weight is the tenant's weight (set on every one of its quota rows, like
-- queue_max_bypass; `npm run tenant -- weight <tenant> <w>`). Weight 2 is entitled to twice the
-- capacity of weight 1 while both wait.
ALTER TABLE tenant_quota ADD COLUMN fair_weight INT NOT NULL DEFAULT 1;
