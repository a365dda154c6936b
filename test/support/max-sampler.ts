// A checker that samples a number (a charge, a cluster's reserved room) every `everyMs` until
// stopped, and gives the highest it saw: for "never above the limit" while a scenario runs.
export function maxSampler(read: () => Promise<number>, everyMs = 100): { stop: () => Promise<number> } {
  let max = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      max = Math.max(max, await read());
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return max;
    },
  };
}
