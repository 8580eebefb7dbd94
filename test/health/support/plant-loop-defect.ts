/**
 * Required (node -r) before the worker host's main by test/health/loop-ended.spec.ts: plants a
 * defect no production path has, so a claim loop ends as a real defect would end it. Every
 * claim loop's first pass asks its IsolationGate for its turn; here that call throws, outside
 * the claim's own error handling, so the error escapes the loop's run.
 */
import { IsolationGate } from '../../../libs/echomq/src/worker/isolation-gate';

IsolationGate.prototype.turn = function plantedTurn(): never {
  throw new Error('a defect planted by the test');
};
