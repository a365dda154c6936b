import { describe, expect, it } from 'vitest';
import { LoadBook } from './load-book.ts';

describe('LoadBook', () => {
  it('counts requests in flight; a release counts once', () => {
    const book = new LoadBook();
    const r1 = book.acquire('a');
    book.acquire('a');
    expect(book.inflight('a')).toBe(2);
    r1();
    r1();
    expect(book.inflight('a')).toBe(1);
    expect(book.inflight('b')).toBe(0);
  });

  it('keeps the last scrape until one fails', () => {
    const book = new LoadBook();
    book.scraped('a', 3, 1000, 1);
    expect(book.loads.get('a')).toEqual({ inflight: 0, scraped: { value: 3, at: 1000, inflightAtScrape: 1 } });
    book.scrapeFailed('a');
    expect(book.loads.get('a')).toEqual({ inflight: 0 });
  });

  it('forgets endpoints that left; one with requests in flight keeps its count but not its scrape', () => {
    const book = new LoadBook();
    book.scraped('gone', 1, 0, 0);
    book.scraped('busy', 1, 0, 0);
    book.scraped('kept', 1, 0, 0);
    const release = book.acquire('busy');
    book.retain(new Set(['kept']));
    expect([...book.loads.keys()].sort()).toEqual(['busy', 'kept']);
    expect(book.loads.get('busy')).toEqual({ inflight: 1 });
    release();
    book.retain(new Set(['kept']));
    expect([...book.loads.keys()]).toEqual(['kept']);
  });
});
