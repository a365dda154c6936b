// Cancellation plumbing: a runnable owns an AbortController that aborts with its parent (the
// Manager's shutdown signal) or on its own stop().

/** A new controller that aborts when `parent` does (and can be aborted on its own). */
export function childAbort(parent?: AbortSignal): AbortController {
  const child = new AbortController();
  if (parent?.aborted) child.abort(parent.reason);
  else parent?.addEventListener('abort', () => child.abort(parent.reason), { once: true });
  return child;
}
