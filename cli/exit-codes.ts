// The CLI's exit codes, one per outcome a script may want to tell apart (documented in
// cli/README.md and printed by `modeldock help`).
export const EXIT = {
  ok: 0,
  /** Something unexpected: a response that is not the API's, a bug. */
  error: 1,
  /** Bad command line, unreadable spec file, or a request the API refused as invalid (400/413/415/422). */
  usage: 2,
  /** 409 quota_exceeded: nothing was charged. */
  quotaExceeded: 3,
  /** 404: no such admission for this tenant (or no such route). */
  notFound: 4,
  /** --wait: the admission failed to start (pod failure, deleted or in conflict before ready, delivery failed, cancelled or expired while queued). */
  failedStart: 5,
  /** --wait: the deadline passed before the awaited state. */
  timedOut: 6,
  /** 401: missing or invalid API key. */
  unauthorized: 7,
  /** The API could not be reached in time, answered 429 (retry later) or 5xx; chat: the reply stream broke or the model failed mid-reply. */
  unavailable: 8,
  /** 409 conflict: deleting an admission in conflict (an operator must resolve it), scaling one that no longer runs, has a change in flight or autoscales (409 autoscaled); --wait: a change superseded. */
  conflict: 9,
  /** Ctrl-C ended the command (chat): 128 + SIGINT, as a shell reports a process the signal killed. */
  interrupted: 130,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export const EXIT_HELP = `Exit codes:
  0  ok
  1  unexpected error (a response that is not the API's)
  2  usage: bad arguments or spec file, or the API refused the request as invalid
  3  quota exceeded (nothing was charged)
  4  not found
  5  failed to start (--wait): a pod failure, deleted or in conflict before ready, or
     cancelled or expired while queued (never charged)
  6  timed out (--wait)
  7  unauthorized: missing or invalid API key
  8  API unavailable: unreachable, no answer within --request-timeout, 429 (too many
     requests: retry later) or 5xx; chat: the reply broke off
  9  conflict: the admission is in conflict (an operator must resolve it), or a change of
     replicas is refused (one is in flight, the admission no longer runs, or it autoscales:
     change --autoscale instead) or superseded; chat: the model is not ready yet (model_not_ready)
  130 interrupted (Ctrl-C)`;

/** The exit code for an API error (HTTP status + error code). */
export function exitForApiError(status: number, code: string): ExitCode {
  if (code === 'quota_exceeded') return EXIT.quotaExceeded;
  if (status === 409) return EXIT.conflict;
  if (status === 404) return EXIT.notFound;
  if (status === 401) return EXIT.unauthorized;
  // Too many requests: nothing was done, and the same request succeeds later, like a 503.
  if (status === 429) return EXIT.unavailable;
  if (status >= 500) return EXIT.unavailable;
  if (status >= 400) return EXIT.usage;
  return EXIT.error;
}
