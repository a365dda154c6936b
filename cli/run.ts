// The CLI: argv → command → API calls → output and an exit code. All I/O comes in through Io,
// so the same code runs for real (main.ts) and under test.
import { stringify as toYaml } from 'yaml';
import { createApi, CliError, type Api, type ScaleChange } from './api.ts';
import { streamChat } from './chat.ts';
import { parseCommand, UsageError, type Command, type Output, type WaitFlags } from './args.ts';
import { EXIT, type ExitCode } from './exit-codes.ts';
import { HELP } from './help.ts';
import type { AdmissionView } from './model.ts';
import { AutoscaleProgress, autoscaleRange } from './autoscale.ts';
import { changeVerdict, failureReport, ReleaseProgress, releaseVerdict, ScaleProgress, scaleVerdict, StartupProgress, startupVerdict, type Verdict } from './progress.ts';
import { queuePlace, renderAdmission, renderList, renderQueue, renderQuota, spinnerLine, styleState, type Look, type Style } from './render.ts';
import { plainScreen, ttyScreen, type Screen } from './screen.ts';
import { parseSpecFile, specBody, type SpecBody } from './spec.ts';

export interface OutStream {
  write(s: string): void;
  isTTY: boolean;
  /** Styles text for this stream (colours off when it is not a terminal or NO_COLOR is set). */
  style: Style;
}

export interface Io {
  stdout: OutStream;
  stderr: OutStream;
  env: Record<string, string | undefined>;
  fetch: typeof fetch;
  now(): Date;
  sleep(ms: number): Promise<void>;
  /** Reads a spec file; '-' is standard input. */
  readFile(path: string): Promise<string>;
  newIdempotencyKey(): string;
  /** Calls `tick` every `ms` until the returned function is called (the spinner). */
  every(ms: number, tick: () => void): () => void;
  /** Calls `handler` on the next Ctrl-C (SIGINT) until the returned function is called; a second one is the default again. */
  onInterrupt(handler: () => void): () => void;
  version: string;
}

const look = (s: OutStream): Look => ({ style: s.style, fancy: s.isTTY });

export async function run(argv: string[], io: Io): Promise<ExitCode> {
  const err = (line: string) => io.stderr.write(`${io.stderr.style('red', 'error:')} ${line}\n`);
  let cmd: Command;
  try {
    cmd = parseCommand(argv, io.env);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    err(e.message);
    return EXIT.usage;
  }
  try {
    return await execute(cmd, io);
  } catch (e) {
    if (e instanceof CliError) {
      err(e.message);
      return e.exitCode;
    }
    if (e instanceof UsageError) {
      err(e.message);
      return EXIT.usage;
    }
    err(`unexpected: ${(e as Error).message.split('\n')[0]}`);
    return EXIT.error;
  }
}

async function execute(cmd: Command, io: Io): Promise<ExitCode> {
  if (cmd.kind === 'help') {
    const text = HELP[cmd.topic ?? 'main'];
    if (!text) throw new UsageError(`no help for "${cmd.topic}"; commands: ${Object.keys(HELP).filter((k) => k !== 'main').join(', ')}`);
    if (cmd.missing) {
      io.stderr.write(`${text}\n`);
      return EXIT.usage;
    }
    io.stdout.write(`${text}\n`);
    return EXIT.ok;
  }
  if (cmd.kind === 'version') {
    io.stdout.write(`modeldock ${io.version}\n`);
    return EXIT.ok;
  }
  const api = createApi({ ...cmd.conn, fetch: io.fetch });
  const out = io.stdout;
  const print = (s: string) => out.write(`${s}\n`);
  const structured = (data: unknown, output: Output) => print(output === 'json' ? JSON.stringify(data, null, 2) : toYaml(data).trimEnd());

  switch (cmd.kind) {
    case 'get': {
      const a = await api.get(cmd.id);
      if (cmd.output === 'table') print(renderAdmission(a, look(out)));
      else structured(a, cmd.output);
      return EXIT.ok;
    }
    case 'list': {
      const items: AdmissionView[] = [];
      let cursor: string | undefined;
      do {
        const page = await api.list({ limit: cmd.all ? 100 : cmd.limit, cursor });
        items.push(...page.items);
        cursor = cmd.all ? (page.nextCursor ?? undefined) : undefined;
      } while (cursor);
      if (cmd.output === 'table') print(renderList(items, io.now(), look(out)));
      else structured({ items }, cmd.output);
      return EXIT.ok;
    }
    case 'queue': {
      const q = await api.queue();
      if (cmd.output === 'table') print(renderQueue(q, look(out)));
      else structured(q, cmd.output);
      return EXIT.ok;
    }
    case 'quota': {
      const q = await api.quota();
      if (cmd.output === 'table') print(renderQuota(q, look(out)));
      else structured(q, cmd.output);
      return EXIT.ok;
    }
    case 'submit': {
      const file: SpecBody = cmd.spec.file ? parseSpecFile(await readSpec(io, cmd.spec.file), cmd.spec.file) : {};
      const body = specBody(file, cmd.spec);
      const key = cmd.idempotencyKey ?? io.newIdempotencyKey();
      const result = await withRetryHint('the admission', key, () => api.submit(body, key));
      // Progress and messages go to stderr when stdout carries a document (-o json|yaml).
      const human = cmd.output === 'table' ? out : io.stderr;
      const a0 = result.admission;
      human.write(`${submitted(result.created, a0.state)} ${human.style('bold', a0.name)} ${a0.id}\n`);
      if (a0.spec.autoscale) human.write(`  autoscales ${autoscaleRange(a0.spec.autoscale)}, starting at ${a0.spec.replicas}\n`);
      if (a0.state === 'queued') {
        const expiry = a0.queue?.expiresAt ? `expires ${a0.queue.expiresAt}` : 'no expiry';
        human.write(`  waiting for quota, nothing charged yet: ${queuePlace(a0.queue)}; ${expiry}${cmd.wait.wait ? '' : ` (--wait to follow; modeldock delete ${a0.id} cancels)`}\n`);
      }
      let final = a0;
      let code: ExitCode = EXIT.ok;
      if (cmd.wait.wait) {
        const progress = new StartupProgress(look(human));
        const auto = new AutoscaleProgress(look(human));
        const r = await watch(api, a0, cmd.wait, io, human, startupVerdict, (a) => [...progress.update(a), ...auto.update(a)], (a) => progress.waitingFor(a));
        final = r.admission;
        const screen = lineWriter(human);
        for (const l of progress.finish(final)) screen(l);
        code = conclude(r, human, 'ready', EXIT.failedStart, () => `${human.style('green', 'ready')}: ${final.endpoint ?? '(no endpoint reported)'}`);
      }
      if (cmd.output !== 'table') structured(final, cmd.output);
      return code;
    }
    case 'scale': {
      const key = cmd.idempotencyKey ?? io.newIdempotencyKey();
      const result = await withRetryHint('the change', key, () => scaleOrHint(api, cmd.id, { replicas: cmd.replicas, autoscale: cmd.autoscale }, key));
      const human = cmd.output === 'table' ? out : io.stderr;
      const a0 = result.admission;
      const p = a0.pendingChange;
      human.write(
        `${a0.name} ${a0.id}: ${p ? `${p.fromReplicas} → ${p.toReplicas} replicas, charged for ${a0.chargedReplicas ?? '?'}` : `${a0.replicas ?? '?'} replicas${result.changed ? '' : ' (nothing to change)'}`}${autoscaleNote(cmd.autoscale, a0)}\n`,
      );
      let final = a0;
      let code: ExitCode = EXIT.ok;
      if (cmd.wait.wait) {
        const progress = new ScaleProgress(look(human));
        const auto = new AutoscaleProgress(look(human));
        // A change of the autoscaling settles at whatever replicas it leaves (the autoscaler may move them next).
        const verdict = cmd.autoscale === undefined && cmd.replicas !== undefined ? scaleVerdict(cmd.replicas) : changeVerdict(a0.generation);
        const r = await watch(api, a0, cmd.wait, io, human, verdict, (a) => [...progress.update(a, io.now()), ...auto.update(a)], (a) => a.pendingChange?.phase ?? 'settled');
        final = r.admission;
        code = conclude(r, human, 'settled', EXIT.conflict, () => `${human.style('green', 'scaled')}: ${final.name} runs ${final.replicas ?? '?'} replica(s), charged ${final.chargedReplicas ?? '?'}`);
      }
      if (cmd.output !== 'table') structured(final, cmd.output);
      return code;
    }
    case 'chat': {
      const message = (cmd.message ?? (await readStdin(io))).trim();
      if (!message) throw new UsageError('no message: give it after the id, or on standard input');
      const interrupt = new AbortController();
      const off = io.onInterrupt(() => interrupt.abort());
      // Only the reply goes to stdout, as it comes; it ends with a newline, even when cut short.
      let last = '';
      try {
        const { id, model, system, maxTokens } = cmd;
        await streamChat({ ...cmd.conn, fetch: io.fetch }, { id, model, message, system, maxTokens }, (text) => {
          if (!text) return;
          out.write(text);
          last = text;
        }, interrupt.signal);
      } finally {
        off();
        if (last && !last.endsWith('\n')) out.write('\n');
      }
      return EXIT.ok;
    }
    case 'delete': {
      const a0 = await api.remove(cmd.id);
      const human = cmd.output === 'table' ? out : io.stderr;
      let final = a0;
      let code: ExitCode = EXIT.ok;
      if (!cmd.wait.wait) human.write(`${a0.name} ${a0.id}: ${styleState(human.style, a0.state)}${deleteNote(a0.state)}\n`);
      else {
        const progress = new ReleaseProgress(look(human));
        const r = await watch(api, a0, cmd.wait, io, human, releaseVerdict, (a) => progress.update(a), () => 'released');
        final = r.admission;
        code = conclude(r, human, 'released', EXIT.conflict, () =>
          final.state === 'released'
            ? `${human.style('green', 'released')}: the quota of ${final.name} is free again`
            : `${human.style('green', final.state)}: ${final.name} left the queue unadmitted; nothing was charged`,
        );
      }
      if (cmd.output !== 'table') structured(final, cmd.output);
      return code;
    }
  }
}

/** A request that got no answer may still have been made: the error says which key to retry with (the same key changes nothing again). */
async function withRetryHint<T>(what: string, key: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (e) {
    // A 429 refused the request before anything was done: there is nothing to retry safely.
    if (e instanceof CliError && e.exitCode === EXIT.unavailable && e.code !== 'rate_limited') {
      throw new CliError(e.exitCode, `${e.message} (${what} may have been made: retry with --idempotency-key ${key})`);
    }
    throw e;
  }
}

/** PATCH; a 409 autoscaled (replicas alone while it autoscales) says how to change it instead (exit 9 all the same). */
async function scaleOrHint(api: Api, id: string, change: ScaleChange, key: string): ReturnType<Api['scale']> {
  try {
    return await api.scale(id, change, key);
  } catch (e) {
    if (e instanceof CliError && e.code === 'autoscaled') {
      throw new CliError(e.exitCode, `${e.message} (modeldock scale ${id} --autoscale MIN:MAX:TARGET, or --autoscale off)`, e.code);
    }
    throw e;
  }
}

/** After a scale that set the autoscaling: what the admission does now, as the API answered. */
function autoscaleNote(asked: ScaleCommand['autoscale'], a: AdmissionView): string {
  if (asked === undefined) return '';
  return a.spec.autoscale ? `; autoscales ${autoscaleRange(a.spec.autoscale)}` : '; autoscaling off: the replicas stay as set';
}

/** The first word of a submit's answer: made now (admitted or queued), or a replay of the same key. */
function submitted(created: boolean, state: string): string {
  const what = state === 'queued' ? 'queued' : 'admitted';
  return created ? what : `already ${what === 'queued' ? 'submitted' : what} (same Idempotency-Key)${what === 'queued' ? ', queued' : ''}`;
}

/** After a delete without --wait: what happens to the quota now. */
function deleteNote(state: string): string {
  if (state === 'released') return '';
  if (state === 'cancelled' || state === 'expired') return ' (it was queued: nothing was charged)';
  return ' (quota is released once every pod is gone; --wait to follow)';
}

const lineWriter = (s: OutStream) => (l: string) => s.write(`${l}\n`);

async function readStdin(io: Io): Promise<string> {
  try {
    return await io.readFile('-');
  } catch (e) {
    throw new UsageError(`cannot read standard input: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

async function readSpec(io: Io, path: string): Promise<string> {
  try {
    return await io.readFile(path);
  } catch (e) {
    throw new UsageError(`cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

type ScaleCommand = Extract<Command, { kind: 'scale' }>;

type WatchResult = { admission: AdmissionView; verdict: Verdict; timedOut: boolean; waitedMs: number };

/**
 * Polls the admission until the verdict is no longer `waiting` or the deadline passes. Each
 * new view is passed to `lines` (permanent lines to print); on a TTY a spinner line shows what
 * is awaited. An unreachable API is retried until the deadline (the wait is about the
 * admission, not one request); any other error ends the wait.
 */
async function watch(
  api: Api,
  first: AdmissionView,
  flags: WaitFlags,
  io: Io,
  stream: OutStream,
  verdictOf: (a: AdmissionView) => Verdict,
  lines: (a: AdmissionView) => string[],
  awaiting: (a: AdmissionView) => string,
): Promise<WatchResult> {
  const started = io.now().getTime();
  const deadline = started + flags.timeoutMs;
  const screen: Screen = stream.isTTY ? ttyScreen((s) => stream.write(s)) : plainScreen((s) => stream.write(s));
  let a = first;
  let verdict = verdictOf(a);
  let note = verdict.kind === 'waiting' ? verdict.note : undefined;
  let tick = 0;
  const draw = () => screen.status(spinnerLine(tick++, awaiting(a), io.now().getTime() - started, note, stream.style));
  const stop = stream.isTTY ? io.every(100, draw) : () => {};
  let lastNote: string | undefined;
  try {
    for (;;) {
      for (const l of lines(a)) screen.line(l);
      if (!stream.isTTY && note && note !== lastNote) screen.line(`  … ${note}`);
      lastNote = note;
      if (verdict.kind !== 'waiting') return { admission: a, verdict, timedOut: false, waitedMs: io.now().getTime() - started };
      const left = deadline - io.now().getTime();
      if (left <= 0) return { admission: a, verdict, timedOut: true, waitedMs: io.now().getTime() - started };
      if (stream.isTTY) draw();
      await io.sleep(Math.min(flags.intervalMs, left));
      try {
        a = await api.get(a.id);
        verdict = verdictOf(a);
        note = verdict.kind === 'waiting' ? verdict.note : undefined;
      } catch (e) {
        if (!(e instanceof CliError) || e.exitCode !== EXIT.unavailable) throw e;
        note = `${e.message}; retrying`;
      }
    }
  } finally {
    stop();
    screen.close();
  }
}

function conclude(r: WatchResult, stream: OutStream, goal: string, failedCode: ExitCode, success: () => string): ExitCode {
  const lk = look(stream);
  if (r.verdict.kind === 'done') {
    stream.write(`${success()}\n`);
    return EXIT.ok;
  }
  if (r.verdict.kind === 'failed') {
    for (const l of failureReport(r.admission, r.verdict.reason, lk)) stream.write(`${l}\n`);
    return failedCode;
  }
  const reason = `still ${r.admission.state}, not ${goal}, after ${Math.round(r.waitedMs / 1000)}s (--timeout)`;
  for (const l of failureReport(r.admission, reason, lk)) stream.write(`${l}\n`);
  return EXIT.timedOut;
}
