// What `--wait` decides and prints, apart from any I/O: the verdict on an admission (still
// waiting, done, failed) and the progress lines to print as it moves. Pure.
import { formatDuration, elapsedMs, nextStage, startupStages, STAGES } from '../schema/timeline.ts';
import { releaseBlocker, type AdmissionView } from './model.ts';
import { failureLines, queuePlace, stageLine, styleState, type Look } from './render.ts';

export type Verdict = { kind: 'waiting'; note?: string } | { kind: 'done' } | { kind: 'failed'; reason: string };

/**
 * Pod failures after which waiting is pointless: the pod will not start without a change
 * (a new image, a fixed command). Other failures are shown and the wait goes on.
 */
export const CONCLUSIVE_FAILURES = new Set([
  'ErrImagePull',
  'ImagePullBackOff',
  'InvalidImageName',
  'ErrImageNeverPull',
  'CrashLoopBackOff',
  'CreateContainerConfigError',
  'CreateContainerError',
  'RunContainerError',
]);

const GONE = new Set(['deleting', 'releasing', 'released']);

/** Waiting for an admission to become ready (through the queue first, when it was queued). */
export function startupVerdict(a: AdmissionView): Verdict {
  if (a.state === 'ready') return { kind: 'done' };
  // Left the queue without being admitted: it will never start, and nothing was charged.
  if (a.state === 'cancelled') return { kind: 'failed', reason: 'the admission was cancelled while queued (deleted before quota freed up); nothing was charged' };
  if (a.state === 'expired') {
    return { kind: 'failed', reason: `the admission expired in the queue${a.queue?.expiresAt ? ` at ${a.queue.expiresAt}` : ''} (its --queue-ttl ran out before quota freed up); nothing was charged` };
  }
  if (a.state === 'conflict') return { kind: 'failed', reason: 'the admission is in conflict; an operator must resolve it' };
  if (GONE.has(a.state)) return { kind: 'failed', reason: `the admission is ${a.state} and was never ready` };
  if (a.deadOutboxRows) return { kind: 'failed', reason: 'its delivery to the cluster failed permanently; an operator must look at the outbox' };
  if (a.lastFailure && CONCLUSIVE_FAILURES.has(a.lastFailure.reason)) return { kind: 'failed', reason: `a pod failed to start (${a.lastFailure.reason})` };
  if (a.lastFailure) return { kind: 'waiting', note: `last failure: ${a.lastFailure.reason}` };
  return { kind: 'waiting' };
}

/** Waiting for a deleted admission to be released (a queued one is cancelled: nothing to release). */
export function releaseVerdict(a: AdmissionView): Verdict {
  if (a.state === 'released' || a.state === 'cancelled' || a.state === 'expired') return { kind: 'done' };
  if (a.state === 'conflict') return { kind: 'failed', reason: 'the admission is in conflict; an operator must resolve it' };
  if (a.releaseBlockedSince) {
    const note =
      a.releaseBlockedReason === 'Finalizers'
        ? `ReleaseBlocked: the ModelService stays in deletion (finalizers ${(a.releaseBlockedFinalizers ?? []).join(', ')})`
        : `ReleaseBlocked: ${(a.releaseBlockedPods ?? []).length} pod(s) still terminating`;
    return { kind: 'waiting', note };
  }
  return { kind: 'waiting' };
}

/**
 * The startup stages printed so far → the lines to print for a newer view of the admission.
 * Stages are printed once each, in order; a stage this API does not report is printed as such
 * when a later stage is reached (or at the end), never given a made-up time.
 */
export class StartupProgress {
  private printed = 0;
  /** The queue position last printed (a line each time it moves); undefined: none yet. */
  private lastPosition: number | null | undefined;
  private leftQueue = false;
  private readonly look: Look;
  constructor(look: Look) {
    this.look = look;
  }

  update(a: AdmissionView): string[] {
    // Queued: nothing has started (not even the admission); a line each time the position moves.
    if (a.state === 'queued') return this.queued(a);
    if (a.state === 'cancelled' || a.state === 'expired') return [];
    const views = startupStages(a);
    const lastDone = views.map((v) => v.status).lastIndexOf('done');
    const out: string[] = [];
    if (this.lastPosition !== undefined && !this.leftQueue) {
      this.leftQueue = true;
      out.push(`${this.look.style('green', this.look.fancy ? '✔' : 'ok')} left the queue${a.queue?.leftAt ? ` ${a.queue.leftAt}` : ''}`);
    }
    for (; this.printed <= lastDone; this.printed++) out.push(stageLine(views[this.printed]!, this.look));
    return out;
  }

  private queued(a: AdmissionView): string[] {
    const q = a.queue;
    const position = q?.position ?? null;
    if (position === this.lastPosition) return [];
    const first = this.lastPosition === undefined;
    this.lastPosition = position;
    const s = this.look.style;
    const expires = first ? (q?.expiresAt ? `, expires ${q.expiresAt}` : ', no expiry') : '';
    return [`${s('yellow', 'queued')}     ${queuePlace(q)}${expires ? s('dim', expires) : ''}`];
  }

  /** What is awaited next, for the spinner line: while queued, the admission with its live place. */
  waitingFor(a: AdmissionView): string {
    if (a.state === 'queued') return `admission (${queuePlace(a.queue)})`;
    return nextStage(startupStages(a)) ?? 'ready';
  }

  /** After the wait: the stages never reached (or not reported), so the picture is complete. */
  finish(a: AdmissionView): string[] {
    if (a.state === 'queued' || a.state === 'cancelled' || a.state === 'expired') return [];
    const views = startupStages(a);
    const out = views.slice(this.printed).map((v) => stageLine(v, this.look));
    this.printed = STAGES.length;
    return out;
  }
}

/** Lines for a deletion as it goes: state changes and ReleaseBlocked with its pods (printed when they change). */
export class ReleaseProgress {
  private lastState: string | undefined;
  private lastBlocked = '';
  private startedAt: string | undefined;
  private readonly look: Look;
  constructor(look: Look) {
    this.look = look;
  }

  update(a: AdmissionView): string[] {
    const s = this.look.style;
    const out: string[] = [];
    const changedAt = a.stateChangedAt ?? null;
    this.startedAt ??= changedAt ?? undefined;
    if (a.state !== this.lastState) {
      const ms = elapsedMs(this.startedAt ?? null, changedAt);
      const when = this.lastState === undefined ? (changedAt ?? '') : ms === null ? '' : `+${formatDuration(ms)}`;
      out.push(`${styleState(s, a.state).padEnd(10)} ${when}`.trimEnd());
      this.lastState = a.state;
    }
    const b = releaseBlocker(a);
    const blocked = a.releaseBlockedSince ? `${a.releaseBlockedSince} ${b.what} ${b.list.join(',')}` : '';
    if (blocked !== this.lastBlocked) {
      if (a.releaseBlockedSince) {
        const list = b.list.length ? b.list.join(', ') : 'not reported';
        out.push(`${s('yellow', 'ReleaseBlocked')} since ${a.releaseBlockedSince}: quota kept until ${b.what}: ${list}`);
      } else if (this.lastBlocked) out.push('ReleaseBlocked cleared');
      this.lastBlocked = blocked;
    }
    return out;
  }
}

/** Waiting for a change of replicas to `target` to settle (applied and, for a decrease, refunded). */
export function scaleVerdict(target: number): (a: AdmissionView) => Verdict {
  return (a) => {
    if (a.state === 'conflict' || GONE.has(a.state)) return { kind: 'failed', reason: `the admission is ${a.state}: the change of replicas no longer applies` };
    const p = a.pendingChange;
    if (!p) return a.replicas === target ? { kind: 'done' } : { kind: 'failed', reason: `another change set the replicas to ${a.replicas ?? '?'}` };
    return { kind: 'waiting', note: p.phase === 'awaitingScaleDown' ? `quota kept for ${p.fromReplicas} replicas until the surplus pods are gone` : undefined };
  };
}

/**
 * Waiting for the change of generation `generation` to settle, whatever replicas it ends at: a
 * change of the autoscaling (the autoscaler may move the replicas again right after, which
 * settles ours too). Without a generation (an older API): until no change is in flight.
 */
export function changeVerdict(generation: number | undefined): (a: AdmissionView) => Verdict {
  return (a) => {
    if (a.state === 'conflict' || GONE.has(a.state)) return { kind: 'failed', reason: `the admission is ${a.state}: the change no longer applies` };
    const p = a.pendingChange;
    if (!p || (generation !== undefined && p.generation > generation)) return { kind: 'done' };
    return { kind: 'waiting', note: p.phase === 'awaitingScaleDown' ? `quota kept for ${p.fromReplicas} replicas until the surplus pods are gone` : undefined };
  };
}

/** One line per phase a change of replicas goes through, with the time since the change was asked for. */
export class ScaleProgress {
  private lastPhase: string | undefined;
  private readonly look: Look;
  constructor(look: Look) {
    this.look = look;
  }

  update(a: AdmissionView, now: Date): string[] {
    const p = a.pendingChange;
    const phase = p ? p.phase : 'settled';
    if (phase === this.lastPhase) return [];
    this.lastPhase = phase;
    const s = this.look.style;
    const since = p?.requestedAt ? ` +${formatDuration(Math.max(0, now.getTime() - Date.parse(p.requestedAt)))}` : '';
    if (!p) return [`${s('green', 'settled').padEnd(18)} ${a.replicas ?? '?'} replica(s), charged ${a.chargedReplicas ?? '?'}`];
    if (p.phase === 'awaitingScaleDown') return [`${s('yellow', 'awaitingScaleDown').padEnd(18)} ${p.fromReplicas} → ${p.toReplicas}: the refund waits until the surplus pods are gone${since}`];
    return [`${s('cyan', p.phase).padEnd(18)} ${p.fromReplicas} → ${p.toReplicas}${since}`];
  }
}

/** The lines printed when a wait ends in failure. */
export function failureReport(a: AdmissionView, reason: string, look: Look): string[] {
  return [`${look.style('red', look.fancy ? '✖' : 'FAILED')} ${a.name} (${a.id}): ${reason}`, ...failureLines(a.lastFailure, a.lastError, look.style, a.lastErrorCode)];
}
