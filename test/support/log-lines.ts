// The lines a growing log file gained since the last look: read from where the last read
// stopped, complete lines only (a line still being written waits for the next look).
import { closeSync, existsSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

export interface LogLines {
  /** Complete lines appended since the previous call (or since `from`). */
  next(): string[];
}

/** `from`: the byte offset to start at (default: the file's current end, so only what comes later). */
export function logLines(file: string, from = existsSync(file) ? statSync(file).size : 0): LogLines {
  let offset = from;
  let partial = '';
  const decoder = new StringDecoder('utf8');
  return {
    next() {
      if (!existsSync(file)) return [];
      const fd = openSync(file, 'r');
      try {
        const size = fstatSync(fd).size;
        if (size <= offset) return [];
        const buf = Buffer.alloc(size - offset);
        const n = readSync(fd, buf, 0, buf.length, offset);
        offset += n;
        const lines = (partial + decoder.write(buf.subarray(0, n))).split('\n');
        partial = lines.pop() ?? '';
        return lines;
      } finally {
        closeSync(fd);
      }
    },
  };
}
