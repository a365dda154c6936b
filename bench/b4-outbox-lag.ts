import type { Benchmark } from './run.ts';

export const b4: Benchmark = {
  id: 'B4',
  title: 'TODO',
  async run() {
    throw new Error('not written yet');
  },
};
