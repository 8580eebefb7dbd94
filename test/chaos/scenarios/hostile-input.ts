import { scenario } from '../scenario';

// Placeholder while the scenario is written; replaced in full.
export const hostileInput = scenario({
  name: 'hostile-input',
  summary: 'not built yet',
  params: {},
  async run() {
    return { figures: {}, broken: ['not built yet'] };
  },
});
