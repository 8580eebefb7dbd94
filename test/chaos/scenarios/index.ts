import type { Scenario } from '../scenario';
import { clockSkew } from './clock-skew';
import { clusterFailover } from './cluster-failover';
import { failover } from './failover';
import { hostileInput } from './hostile-input';
import { memoryPressure } from './memory-pressure';
import { networkFaults } from './network-faults';
import { poisonPill } from './poison-pill';
import { redisCrash } from './redis-crash';
import { redisFrozen } from './redis-frozen';
import { workerCrashes } from './worker-crashes';

/** Every scenario, in the order `npm run chaos` runs them (the numbering). */
export const SCENARIOS: readonly Scenario[] = [
  workerCrashes,
  redisCrash,
  redisFrozen,
  networkFaults,
  clockSkew,
  poisonPill,
  hostileInput,
  memoryPressure,
  failover,
  clusterFailover,
];
