// Where progress is drawn. On a TTY: permanent lines plus one status line at the bottom that is
// redrawn in place (the spinner). Otherwise: permanent lines only, one per event, no control codes.
export interface Screen {
  /** A permanent line. */
  line(text: string): void;
  /** The status line (TTY only; ignored on a plain screen); undefined clears it. */
  status(text: string | undefined): void;
  /** Clears the status line; later output starts on a clean line. */
  close(): void;
}

const CLEAR_LINE = '\r\x1b[2K';

export function ttyScreen(write: (s: string) => void): Screen {
  let current: string | undefined;
  return {
    line(text) {
      write(`${current !== undefined ? CLEAR_LINE : ''}${text}\n${current ?? ''}`);
    },
    status(text) {
      if (text === current) return;
      write(`${CLEAR_LINE}${text ?? ''}`);
      current = text;
    },
    close() {
      if (current !== undefined) write(CLEAR_LINE);
      current = undefined;
    },
  };
}

export function plainScreen(write: (s: string) => void): Screen {
  return { line: (text) => write(`${text}\n`), status: () => {}, close: () => {} };
}
