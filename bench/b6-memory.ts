import type { Benchmark } from './run.ts';

export const b6: Benchmark = {
  id: 'B6',
  title: 'TODO',
  async run() {
    throw new Error('not written yet');
  },
};
