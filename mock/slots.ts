// N execution slots and a bounded FIFO queue. acquire(signal) resolves with a lease once a
// slot is free; aborting the signal while queued removes the waiter at once.

export type Lease = {
  /** Milliseconds spent in the queue (0 when a slot was free on arrival). */
  readonly waitedMs: number;
  /** Give the slot back; idempotent. The next waiter in FIFO order gets it synchronously. */
  release(): void;
};

export type SlotSchedulerOptions = {
  slots: number;
  queueLimit: number;
  now?: () => number;
};

export class QueueFullError extends Error {
  override readonly name = 'QueueFullError';
}

type Waiter = {
  enqueuedAt: number;
  resolve: (lease: Lease) => void;
  reject: (reason: unknown) => void;
  detach: () => void;
};

export class SlotScheduler {
  readonly slots: number;
  readonly queueLimit: number;
  #now: () => number;
  #busy = 0;
  #queue: Waiter[] = [];

  constructor({ slots, queueLimit, now = Date.now }: SlotSchedulerOptions) {
    if (!Number.isInteger(slots) || slots < 1) throw new RangeError(`slots must be an integer >= 1, got ${slots}`);
    if (!Number.isInteger(queueLimit) || queueLimit < 0) {
      throw new RangeError(`queueLimit must be an integer >= 0, got ${queueLimit}`);
    }
    this.slots = slots;
    this.queueLimit = queueLimit;
    this.#now = now;
  }

  get busy(): number {
    return this.#busy;
  }

  get queued(): number {
    return this.#queue.length;
  }

  /** Rejects with QueueFullError when the queue is full, or with `signal.reason` when aborted. */
  acquire(signal?: AbortSignal): Promise<Lease> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const enqueuedAt = this.#now();
    if (this.#busy < this.slots && this.#queue.length === 0) return Promise.resolve(this.#grant(enqueuedAt));
    if (this.#queue.length >= this.queueLimit) {
      return Promise.reject(new QueueFullError(`queue is full (${this.queueLimit} waiting)`));
    }
    return new Promise<Lease>((resolve, reject) => {
      const onAbort = () => {
        this.#remove(waiter);
        reject(signal?.reason);
      };
      const waiter: Waiter = {
        enqueuedAt,
        resolve,
        reject,
        detach: () => signal?.removeEventListener('abort', onAbort),
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#queue.push(waiter);
    });
  }

  /** Reject every queued waiter (shutdown). Returns how many were waiting. */
  rejectQueued(reason: unknown): number {
    const waiters = this.#queue.splice(0);
    for (const waiter of waiters) {
      waiter.detach();
      waiter.reject(reason);
    }
    return waiters.length;
  }

  #grant(enqueuedAt: number): Lease {
    this.#busy++;
    let released = false;
    return {
      waitedMs: Math.max(0, this.#now() - enqueuedAt),
      release: () => {
        if (released) return;
        released = true;
        this.#busy--;
        this.#dispatch();
      },
    };
  }

  #dispatch(): void {
    while (this.#busy < this.slots) {
      const waiter = this.#queue.shift();
      if (!waiter) return;
      waiter.detach();
      waiter.resolve(this.#grant(waiter.enqueuedAt));
    }
  }

  #remove(waiter: Waiter): void {
    const index = this.#queue.indexOf(waiter);
    if (index >= 0) this.#queue.splice(index, 1);
  }
}
