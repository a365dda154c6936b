// A model call and the check that the model may be called, side by side: the forward to the
// gateway starts at once, the ledger read (is the admission the caller's, and ready?) runs beside
// it, and the answer is given only once the read said yes. Refused, the forward is aborted and
// its answer, whatever it was, is dropped: the client gets the refusal (404, 409 model_not_ready,
// 503 database_unavailable) and not a byte of the model's. The read costs a database round trip
// (a few ms); the model's first token takes longer, so the check no longer adds to it (bench B10).
// Safe because the forward cannot reach what the check would refuse: the credential names the
// authenticated tenant, and the gateway routes only to that tenant's pods (gateway/routes.ts), so
// another tenant's admission id is a 404 there too; an admission that is not ready has no ready
// endpoint for the gateway, which waits — until this abort ends it.

/** `start(signal)` begins the call (aborted by `client` or a refusal); `check()` throws to refuse. */
export async function callWhenAllowed(check: () => Promise<void>, start: (signal: AbortSignal) => Promise<Response>, client: AbortSignal): Promise<Response> {
  const refusal = new AbortController();
  const call = start(AbortSignal.any([client, refusal.signal]));
  try {
    await check();
  } catch (err) {
    refusal.abort(new DOMException('the model may not be called', 'AbortError'));
    // The aborted call's own end (an abort error, or an answer already in) is not the answer.
    const answered = await call.catch(() => undefined);
    await answered?.body?.cancel().catch(() => undefined);
    throw err;
  }
  return call;
}
