// @ts-check
// How the page words a queued admission (onShortQuota "queue"): its place — "position 2 · about
// 40 s", or why the API gives no estimate — and when it expires. The list (GET /requests) leaves
// position and estimate null; the page takes them from GET /queue (placesById). Pure.

/**
 * @typedef {{ seconds: number | null, method?: string, basis?: string, reason?: string }} WaitEstimate
 * @typedef {{ id: string, position: number, estimate: WaitEstimate | null }} QueueItem
 */

/** An estimated wait in words: "about 40 s", "about 3 min", "about 2 h". @param {number} seconds */
export function aboutWait(seconds) {
  if (seconds < 120) return `about ${seconds} s`;
  if (seconds < 2 * 3600) return `about ${Math.round(seconds / 60)} min`;
  return `about ${Math.round(seconds / 3600)} h`;
}

/** "position 2 · about 40 s", or the API's reason when it has no estimate. @param {number | null | undefined} position @param {WaitEstimate | null | undefined} estimate */
export function queuePlaceText(position, estimate) {
  const where = position ? `position ${position}` : 'position not known yet';
  if (!estimate) return `${where} · no estimate`;
  if (estimate.seconds === null) return `${where} · no estimate: ${estimate.reason ?? 'not reported'}`;
  return `${where} · ${estimate.seconds === 0 ? 'next to be admitted' : aboutWait(estimate.seconds)}`;
}

/** When a queued admission gives up, as the page shows it (`toTime` formats a timestamp). @param {string | null | undefined} expiresAt @param {(iso: string) => string} toTime */
export function expiryText(expiresAt, toTime) {
  return expiresAt ? `expires ${toTime(expiresAt)} unless admitted` : 'no expiry: waits until admitted or cancelled';
}

/** GET /queue's items by admission id. @param {{ items?: QueueItem[] } | null | undefined} view @returns {Map<string, QueueItem>} */
export function placesById(view) {
  return new Map((view?.items ?? []).map((i) => [i.id, i]));
}
