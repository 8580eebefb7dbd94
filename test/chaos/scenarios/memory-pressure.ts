import { scenario } from '../scenario';

// Placeholder while the scenario is written; replaced in full.
export const memoryPressure = scenario({
  name: 'memory-pressure',
  summary: 'not built yet',
  params: {},
  async run() {
    return { figures: {}, broken: ['not built yet'] };
  },
});
