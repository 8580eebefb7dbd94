import { scenario } from '../scenario';

// Placeholder while the scenario is written; replaced in full.
export const redisFrozen = scenario({
  name: 'redis-frozen',
  summary: 'not built yet',
  params: {},
  async run() {
    return { figures: {}, broken: ['not built yet'] };
  },
});
