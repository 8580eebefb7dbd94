import { scenario } from '../scenario';

// Placeholder while the scenario is written; replaced in full.
export const poisonPill = scenario({
  name: 'poison-pill',
  summary: 'not built yet',
  params: {},
  async run() {
    return { figures: {}, broken: ['not built yet'] };
  },
});
