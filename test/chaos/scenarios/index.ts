import type { Scenario } from '../scenario';
import { workerCrashes } from './worker-crashes';

/** Every scenario, in the order `npm run chaos` runs them (issue 12's numbering). */
export const SCENARIOS: readonly Scenario[] = [workerCrashes];
