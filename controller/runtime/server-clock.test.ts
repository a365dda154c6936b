import { describe, expect, it } from 'vitest';
import { ServerClock } from './server-clock.ts';

const LOCAL = Date.parse('2026-12-03T10:00:00.000Z');
const httpDate = (ms: number) => new Date(ms).toUTCString(); // second resolution, as the header

describe('ServerClock: the API server time from Date headers', () => {
  it('knows no offset before any response: the local clock', () => {
    const clock = new ServerClock(() => LOCAL);
    expect(clock.now().getTime()).toBe(LOCAL);
  });

  it.each([
    { skew: 5 * 60_000, name: 'a server 5 min ahead' },
    { skew: -7 * 60_000 - 250, name: 'a server 7 min 250 ms behind' },
    { skew: 0, name: 'clocks in step' },
  ])('$name: within a second after one response, within ½ s plus the round trip after many', ({ skew }) => {
    let local = LOCAL;
    const clock = new ServerClock(() => local);
    const one = (rttMs: number) => {
      const sent = local;
      local += rttMs;
      clock.observe(httpDate(sent + rttMs / 2 + skew), sent, local);
      local += 137; // responses arrive at every fraction of a second
    };
    one(40);
    expect(Math.abs(clock.now().getTime() - (local + skew))).toBeLessThanOrEqual(1000);
    for (let i = 0; i < 40; i++) one(20);
    expect(Math.abs(clock.now().getTime() - (local + skew))).toBeLessThanOrEqual(500 + 10);
  });

  it('a server clock stepped since (bounds that no longer overlap): the latest response wins', () => {
    let local = LOCAL;
    const clock = new ServerClock(() => local);
    for (let i = 0; i < 5; i++) {
      clock.observe(httpDate(local), local, local + 10);
      local += 300;
    }
    clock.observe(httpDate(local + 3_600_000), local, local + 10); // stepped an hour ahead
    expect(Math.abs(clock.now().getTime() - (local + 3_600_000))).toBeLessThanOrEqual(1000);
  });

  it('ignores a response without a usable Date header, or whose times are reversed', () => {
    const clock = new ServerClock(() => LOCAL);
    clock.observe(null, LOCAL, LOCAL + 5);
    clock.observe('not a date', LOCAL, LOCAL + 5);
    clock.observe(httpDate(LOCAL + 60_000), LOCAL + 5, LOCAL);
    expect(clock.offsetMs()).toBe(0);
  });

  it('keeps only the latest samples: an old tight bound does not pin a clock that moved', () => {
    let local = LOCAL;
    const clock = new ServerClock(() => local);
    clock.observe(httpDate(local), local, local + 1);
    local += 1000;
    for (let i = 0; i < 40; i++) {
      clock.observe(httpDate(local + 10_000), local, local + 5); // the server now 10 s ahead
      local += 250;
    }
    expect(Math.abs(clock.offsetMs() - 10_000)).toBeLessThanOrEqual(1000);
  });
});
