// The outbox contract shared by both sides: the Worker inserts rows of these kinds under these
// dedupe keys (functions/db/outbox.ts); the controller claims and acknowledges them
// (controller/reservation/outbox-store.ts). `dedupe_key` is UNIQUE: an insert whose key exists is a
// no-op, never a duplicate row.
export type OutboxKind = 'create' | 'delete' | 'reconcile' | 'scale';

export const dedupeKey = {
  create: (id: string) => `create:${id}`,
  delete: (id: string) => `delete:${id}`,
  /** One per change generation of an admission (PATCH /requests/:id). */
  scale: (id: string, generation: number) => `scale:${id}:${generation}`,
  /** Present while a reconcile row is pending; the controller sets dedupe_key NULL when done. */
  reconcilePending: (id: string) => `reconcile:${id}:pending`,
};
