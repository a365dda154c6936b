// What /readyz answers, from the server's state. Draining wins over everything (SIGTERM was
// received), then MOCK_NEVER_READY, then the warm-up.

export type Readiness = 'ready' | 'warming_up' | 'never_ready' | 'draining';

export type ReadinessState = {
  /** Shutdown began (SIGTERM): not ready again, whatever else holds. */
  draining: boolean;
  /** Held unready for the process's life (MOCK_NEVER_READY): a model that never finishes loading. */
  neverReady: boolean;
  uptimeMs: number;
  warmupMs: number;
};

/** Past the warm-up and not held unready: completions may be served (unless draining). */
export function modelLoaded(state: Omit<ReadinessState, 'draining'>): boolean {
  return !state.neverReady && state.uptimeMs >= state.warmupMs;
}

export function readiness(state: ReadinessState): Readiness {
  if (state.draining) return 'draining';
  if (state.neverReady) return 'never_ready';
  return modelLoaded(state) ? 'ready' : 'warming_up';
}
