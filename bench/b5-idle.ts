import type { Benchmark } from './run.ts';

export const b5: Benchmark = {
  id: 'B5',
  title: 'TODO',
  async run() {
    throw new Error('not written yet');
  },
};
