import { scenario } from '../scenario';

// Placeholder while the scenario is written; replaced in full.
export const redisCrash = scenario({
  name: 'redis-crash',
  summary: 'not built yet',
  params: {},
  async run() {
    return { figures: {}, broken: ['not built yet'] };
  },
});
