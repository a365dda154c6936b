// @ts-check
// The tenant dashboard: paste the API key (kept in sessionStorage only, sent as the Bearer
// header; no cookies), see admissions with their state, startup timeline and endpoint, the quota
// as bars, and delete with a confirmation. Same-origin calls to the admission API; DOM built
// with textContent only (no HTML strings), so the page runs under a strict CSP with Trusted Types.
// The startup stages are schema/timeline.ts: the bundle serves it as ./startup.js and points
// this import there (scripts/gen-dashboard.ts). Every text the page shows passes printable()
// (schema/text.ts, served as ./text.js): a pod's message or any other server string shows no
// control character. An admission with an endpoint shows how to call its model: the URL and a
// curl command, each with a Copy button (./usage.js). A queued admission (onShortQuota "queue")
// shows its place in the tenant's queue and estimated wait (from GET /queue: the list has none)
// and when it expires, with a Cancel button (DELETE: it was never charged) (./queue.js). An
// admission that autoscales shows its range, the replicas the load asks for and those charged, a
// badge per condition of the autoscaler (its message as the title) and its last change (./autoscale.js).
import { describeFailure, formatDuration, startupStages } from '../../../schema/timeline.ts';
import { printable } from '../../../schema/text.ts';
import { autoscaleText, conditionBadges, CONDITION_TYPES, decisionText } from './autoscale.js';
import { expiryText, placesById, queuePlaceText } from './queue.js';
import { copyText, curlExample } from './usage.js';

const KEY_ITEM = 'modeldock.key';
const REFRESH_MS = 2000;
const REQUEST_TIMEOUT_MS = 10_000;
const NOTICE_MS = 3000;

/**
 * @typedef {import('../../../schema/timeline.ts').StartupFacts & {
 *   id: string, name: string, spec: { replicas: number, autoscale?: import('./autoscale.js').AutoscaleSpec | null },
 *   endpoint: string | null, releaseBlockedSince?: string | null, releaseBlockedPods?: string[] | null,
 *   releaseBlockedReason?: string | null, releaseBlockedFinalizers?: string[] | null,
 *   lastError?: string | null, lastErrorCode?: string | null, lastFailure?: import('../../../schema/timeline.ts').LastFailure | null,
 *   replicas?: number, chargedReplicas?: number, cluster?: string | null,
 *   pendingChange?: { fromReplicas: number, toReplicas: number, phase: string } | null,
 *   queue?: { position?: number | null, estimate?: import('./queue.js').WaitEstimate | null, expiresAt?: string | null } | null,
 *   autoscaleStatus?: import('./autoscale.js').AutoscaleStatus | null
 * }} Admission
 */
/** @typedef {{ unit: string, hard: number, reserved: number, active: number, releasing: number, blocked: number }} Usage */
/** @typedef {{ tenant: string, resources: Record<string, Usage> }} Quota */

/**
 * @template {HTMLElement} T
 * @param {string} id
 * @param {new () => T} type
 * @returns {T}
 */
function $(id, type) {
  const el = document.getElementById(id);
  if (!(el instanceof type)) throw new Error(`#${id} missing`);
  return el;
}

/**
 * @param {string} tag
 * @param {string} [className]
 * @param {string} [text]
 */
function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = printable(text);
  return e;
}

class ApiError extends Error {
  /** @param {number} status @param {string} message */
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/**
 * @param {string} key
 * @param {string} method
 * @param {string} path
 * @returns {Promise<unknown>}
 */
async function api(key, method, path) {
  const res = await fetch(path, {
    method,
    headers: { Authorization: `Bearer ${key}`, Accept: 'application/json' },
    credentials: 'omit',
    cache: 'no-store',
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const body = await res.json().catch(() => null);
  if (!res.ok) throw new ApiError(res.status, body?.error?.message ?? `HTTP ${res.status}`);
  return body;
}

const UNITS = /** @type {Record<string, (n: number) => string>} */ ({
  millicores: (n) => (n % 1000 === 0 ? `${n / 1000}` : `${n}m`),
  MiB: (n) => (n >= 1024 && n % 1024 === 0 ? `${n / 1024}Gi` : `${n}Mi`),
});
/** @param {string} unit @param {number} n */
const amount = (unit, n) => (UNITS[unit] ?? String)(n);

/** @param {Quota} q */
function renderQuota(q) {
  const box = $('quota', HTMLDivElement);
  const cells = Object.entries(q.resources).flatMap(([name, r]) => {
    const meter = document.createElement('meter');
    meter.min = 0;
    meter.max = Math.max(r.hard, 1);
    meter.value = r.reserved;
    meter.high = meter.max * 0.8;
    meter.optimum = 0;
    meter.title = `active ${amount(r.unit, r.active)}, releasing ${amount(r.unit, r.releasing)}, blocked ${amount(r.unit, r.blocked)}`;
    meter.setAttribute('aria-label', `${name} used`);
    meter.dataset.resource = name;
    return [el('span', 'resource', name), meter, el('span', 'amount', `${amount(r.unit, r.reserved)} / ${amount(r.unit, r.hard)}`)];
  });
  box.replaceChildren(...cells);
}

/** @param {Admission} a */
function timelineCell(a) {
  const list = el('ol', 'timeline');
  for (const s of startupStages(a)) {
    const li = el('li', s.status, s.stage);
    li.dataset.stage = s.stage;
    li.dataset.status = s.status;
    let when = '';
    if (s.status === 'unreported') when = 'n/a';
    else if (s.status === 'done' && s.stage !== 'admitted') when = s.sinceMs === null ? '' : `+${formatDuration(s.sinceMs)}`;
    else if (s.status === 'done' && s.at) when = new Date(s.at).toLocaleTimeString();
    if (when) li.append(el('span', 'when', when));
    if (s.status === 'unreported') li.title = 'not reported by this API';
    list.append(li);
  }
  return list;
}

/** The replicas, and a change of them in flight (a decrease stays charged until its surplus pods are gone). @param {Admission} a */
function replicasText(a) {
  const replicas = a.replicas ?? a.spec.replicas;
  const p = a.pendingChange;
  if (!p) return `${replicas} replica${replicas === 1 ? '' : 's'}`;
  const why = p.phase === 'awaitingScaleDown' ? 'waiting for the surplus pods to go' : 'applying';
  return `scaling ${p.fromReplicas} → ${p.toReplicas} (${why}), charged for ${a.chargedReplicas ?? p.fromReplicas}`;
}

/**
 * An admission that autoscales: "auto 1–8: desired 4, charged 3", a badge per condition (its
 * message as the title), and the last change (its reason as the title).
 * @param {Admission} a @param {import('./autoscale.js').AutoscaleSpec} spec
 */
function autoscaleBox(a, spec) {
  const status = a.autoscaleStatus;
  const box = el('div', 'autoscale');
  box.append(el('span', 'auto', autoscaleText(spec, status, a.chargedReplicas)));
  for (const b of conditionBadges(status)) {
    const badge = el('span', `badge badge-${CONDITION_TYPES.includes(b.type) ? b.type : 'other'}`, b.type);
    badge.title = printable(b.title);
    box.append(badge);
  }
  const last = decisionText(status, (iso) => new Date(iso).toLocaleTimeString());
  if (last) {
    const line = el('div', 'decision', last);
    line.title = printable(status?.lastDecision?.reason ?? '');
    box.append(line);
  }
  return box;
}

/**
 * A queued admission instead of its timeline (nothing has started): its place and estimated wait
 * (`place`, from GET /queue) and when it expires.
 * @param {Admission} a @param {import('./queue.js').QueueItem | undefined} place
 */
function queueCell(a, place) {
  const box = el('div', 'queue');
  box.append(
    el('div', 'place', queuePlaceText(place?.position ?? a.queue?.position, place?.estimate ?? a.queue?.estimate)),
    el('div', 'expires', expiryText(a.queue?.expiresAt, (iso) => new Date(iso).toLocaleString())),
    el('div', 'hint', 'Waiting for quota: nothing is charged until it is admitted.'),
  );
  return box;
}

/** @param {Admission} a @param {string} action @param {string} label @param {string} className @param {(a: Admission) => void} handler */
function actionButton(a, action, label, className, handler) {
  const b = /** @type {HTMLButtonElement} */ (el('button', className, label));
  b.type = 'button';
  b.dataset.action = action;
  b.addEventListener('click', () => handler(a));
  return b;
}

/**
 * @param {Admission} a @param {(a: Admission) => void} onDelete @param {(a: Admission) => void} onCancel
 * @param {Map<string, import('./queue.js').QueueItem>} places
 */
function admissionRow(a, onDelete, onCancel, places) {
  const tr = el('tr');
  tr.dataset.id = a.id;
  tr.dataset.state = a.state;
  const name = el('td', undefined, a.name);
  name.append(el('span', 'id', a.id), el('div', 'replicas', replicasText(a)));
  if (a.spec.autoscale) name.append(autoscaleBox(a, a.spec.autoscale));
  const state = el('td');
  state.append(el('span', `state state-${a.state}`, a.state));
  // The cluster it is placed on ("default" while the operator has registered none; null while queued).
  if (a.cluster) state.append(el('div', 'cluster', `on ${a.cluster}`));
  const tl = el('td');
  tl.append(a.state === 'queued' ? queueCell(a, places.get(a.id)) : timelineCell(a));
  if (a.releaseBlockedSince) {
    const waitingFor =
      a.releaseBlockedReason === 'Finalizers'
        ? `the ModelService to leave deletion (finalizers: ${(a.releaseBlockedFinalizers ?? []).join(', ') || 'none'})`
        : (a.releaseBlockedPods ?? []).join(', ') || 'pods';
    tl.append(el('div', 'blocked', `ReleaseBlocked since ${new Date(a.releaseBlockedSince).toLocaleTimeString()}: waiting for ${waitingFor}`));
  }
  if (a.lastFailure) tl.append(el('div', 'failure', describeFailure(a.lastFailure)));
  else if (a.lastError) tl.append(el('div', 'failure', a.lastErrorCode ? `${a.lastErrorCode}: ${a.lastError}` : a.lastError));
  const endpoint = a.endpoint ? endpointCell(a, a.endpoint) : el('td', 'endpoint', '—');
  const actions = el('td');
  if (['admitted', 'delivered', 'ready'].includes(a.state)) actions.append(actionButton(a, 'delete', 'Delete', 'danger', onDelete));
  if (a.state === 'queued') actions.append(actionButton(a, 'cancel', 'Cancel', 'danger', onCancel));
  tr.append(name, state, tl, endpoint, actions);
  return tr;
}

/** @type {ReturnType<typeof setTimeout> | undefined} */
let noticeTimer;

/**
 * Says what a Copy button did, outside the table (which is redrawn every refresh). When the
 * browser cannot copy, the text is shown here selected, for the tenant to copy by hand.
 * @param {string | undefined} message
 * @param {string} [text]
 */
function showNotice(message, text) {
  clearTimeout(noticeTimer);
  const box = $('notice', HTMLElement);
  if (!message) {
    box.replaceChildren();
    box.hidden = true;
    return;
  }
  box.replaceChildren(el('span', undefined, message));
  box.hidden = false;
  if (text === undefined) {
    noticeTimer = setTimeout(() => showNotice(undefined), NOTICE_MS);
    return;
  }
  const code = el('code', 'manual-copy', text);
  const dismiss = /** @type {HTMLButtonElement} */ (el('button', undefined, 'Dismiss'));
  dismiss.type = 'button';
  dismiss.addEventListener('click', () => showNotice(undefined));
  box.append(code, dismiss);
  getSelection()?.selectAllChildren(code);
}

/** @param {string} what @param {string} text */
async function copy(what, text) {
  if (await copyText(text, navigator.clipboard)) showNotice(`Copied the ${what}.`);
  else showNotice(`This browser does not let the page copy: the ${what} is selected below, copy it with Ctrl+C (⌘C).`, text);
}

/** A line of text to copy, with its Copy button. @param {string} className @param {string} what @param {string} text */
function copyLine(className, what, text) {
  const line = el('div', 'copy-line');
  const code = el('code', className, text);
  const button = /** @type {HTMLButtonElement} */ (el('button', 'copy', 'Copy'));
  button.type = 'button';
  button.dataset.action = `copy-${className}`;
  button.title = `Copy the ${what}`;
  // What is copied is what is shown (printable): no hidden character reaches the tenant's shell.
  button.addEventListener('click', () => void copy(what, code.textContent ?? ''));
  line.append(code, button);
  return line;
}

/**
 * The endpoint (<API>/v1/models/<id>, OpenAI-compatible: a client's base URL) and a curl command
 * that streams a chat completion from it. The command reads the key from $MODELDOCK_KEY: the
 * key itself never appears on the page.
 * @param {Admission} a @param {string} endpoint
 */
function endpointCell(a, endpoint) {
  const td = el('td', 'endpoint');
  const ready = a.state === 'ready';
  td.append(
    copyLine('url', 'URL', endpoint),
    copyLine('example', 'example', curlExample(endpoint)),
    el('div', 'hint', `${ready ? '' : 'Takes requests once ready. '}Set MODELDOCK_KEY to your API key first; "model" goes to your server as is. OpenAI clients take the URL as their base URL.`),
  );
  return td;
}

/**
 * @param {Admission[]} items @param {(a: Admission) => void} onDelete @param {(a: Admission) => void} onCancel
 * @param {Map<string, import('./queue.js').QueueItem>} places
 */
function renderAdmissions(items, onDelete, onCancel, places) {
  const table = $('admissions', HTMLTableElement);
  const body = table.tBodies[0];
  if (!body) throw new Error('admissions table has no body');
  body.replaceChildren(...items.map((a) => admissionRow(a, onDelete, onCancel, places)));
  table.hidden = items.length === 0;
  $('empty', HTMLParagraphElement).hidden = items.length !== 0;
  $('updated', HTMLSpanElement).textContent = `updated ${new Date().toLocaleTimeString()}`;
}

/** @param {string | undefined} message */
function showError(message) {
  const p = $('error', HTMLParagraphElement);
  p.textContent = printable(message ?? '');
  p.hidden = !message;
}

/** @param {boolean} signedIn */
function showSignedIn(signedIn) {
  $('login', HTMLElement).hidden = signedIn;
  $('forget', HTMLButtonElement).hidden = !signedIn;
  $('quota-section', HTMLElement).hidden = !signedIn;
  $('admissions-section', HTMLElement).hidden = !signedIn;
  if (!signedIn) {
    $('tenant', HTMLSpanElement).textContent = '';
    showNotice(undefined);
  }
}

/** Asks for confirmation in the page's dialog; resolves true when the tenant confirms. */
/** @param {Admission} a @returns {Promise<boolean>} */
function confirmDelete(a) {
  const dialog = $('confirm', HTMLDialogElement);
  $('confirm-name', HTMLElement).textContent = printable(a.name);
  $('confirm-id', HTMLElement).textContent = printable(a.id);
  return new Promise((resolve) => {
    const ok = $('confirm-delete', HTMLButtonElement);
    const cancel = $('confirm-cancel', HTMLButtonElement);
    /** @param {boolean} v */
    const done = (v) => {
      ok.removeEventListener('click', yes);
      cancel.removeEventListener('click', no);
      dialog.removeEventListener('cancel', no);
      dialog.close();
      resolve(v);
    };
    const yes = () => done(true);
    const no = () => done(false);
    ok.addEventListener('click', yes);
    cancel.addEventListener('click', no);
    dialog.addEventListener('cancel', no);
    dialog.showModal();
  });
}

function start() {
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  const key = () => sessionStorage.getItem(KEY_ITEM);

  /** @param {Admission} a */
  async function onDelete(a) {
    const k = key();
    if (!k || !(await confirmDelete(a))) return;
    try {
      await api(k, 'DELETE', `/requests/${encodeURIComponent(a.id)}`);
      showError(undefined);
    } catch (err) {
      showError(`Delete failed: ${/** @type {Error} */ (err).message}`);
    }
    await refresh();
  }

  /** A queued admission leaves the queue at once (DELETE): never charged, so nothing to confirm away. @param {Admission} a */
  async function onCancel(a) {
    const k = key();
    if (!k) return;
    try {
      await api(k, 'DELETE', `/requests/${encodeURIComponent(a.id)}`);
      showError(undefined);
      showNotice(`Cancelled ${printable(a.name)}: it left the queue; nothing was charged.`);
    } catch (err) {
      showError(`Cancel failed: ${/** @type {Error} */ (err).message}`);
    }
    await refresh();
  }

  async function refresh() {
    clearTimeout(timer);
    const k = key();
    if (!k) return showSignedIn(false);
    try {
      // The list first, then the quota: a change the list shows as done (a release, a scale-down's
      // refund) is then in the quota too — read in parallel, the bars could lag the rows a refresh.
      const list = await api(k, 'GET', '/requests?limit=100');
      const quota = await api(k, 'GET', '/quota');
      const q = /** @type {Quota} */ (quota);
      $('tenant', HTMLSpanElement).textContent = `tenant ${printable(q.tenant)}`;
      renderQuota(q);
      const items = /** @type {{ items: Admission[] }} */ (list).items;
      // The list gives no place in the queue: GET /queue does, only asked for while something waits.
      const places = items.some((a) => a.state === 'queued') ? placesById(/** @type {{ items: import('./queue.js').QueueItem[] }} */ (await api(k, 'GET', '/queue'))) : new Map();
      renderAdmissions(items, (a) => void onDelete(a), (a) => void onCancel(a), places);
      showSignedIn(true);
      showError(undefined);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) {
        sessionStorage.removeItem(KEY_ITEM);
        showSignedIn(false);
        showError(`The key was refused: ${err.message}`);
        return;
      }
      showError(`Cannot load: ${/** @type {Error} */ (err).message}; retrying`);
    }
    timer = setTimeout(() => void refresh(), REFRESH_MS);
  }

  $('key-form', HTMLFormElement).addEventListener('submit', (e) => {
    e.preventDefault();
    const input = $('key', HTMLInputElement);
    sessionStorage.setItem(KEY_ITEM, input.value.trim());
    input.value = '';
    void refresh();
  });
  $('forget', HTMLButtonElement).addEventListener('click', () => {
    sessionStorage.removeItem(KEY_ITEM);
    clearTimeout(timer);
    showSignedIn(false);
  });
  void refresh();
}

start();
