import type { Benchmark } from './run.ts';

export const b8: Benchmark = {
  id: 'B8',
  title: 'TODO',
  async run() {
    throw new Error('not written yet');
  },
};
