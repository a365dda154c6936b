import type { Benchmark } from './run.ts';

export const b3: Benchmark = {
  id: 'B3',
  title: 'TODO',
  async run() {
    throw new Error('not written yet');
  },
};
