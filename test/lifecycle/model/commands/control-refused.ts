/**
 * Job-control calls with an argument out of range (invariant 8): each script checks every
 * argument before its first write, so the call is refused (InvalidArgumentError), records no
 * reply and changes nothing at all. Each is aimed where the call would otherwise act: an update
 * at a pending or scheduled job, retry all at dead jobs, drain at pending work.
 */
import {
  cleanChunk,
  type CleanState,
  drainChunk,
  InvalidArgumentError,
  type JobId,
  obliterateChunk,
  promoteJob,
  retryDeadChunk,
  updateJob,
  WALK_START,
} from '@app/echomq/internal';
import { CONTROL_CHUNK_MAX } from '@app/echomq/scripts/drain';
import type { Model, WriteKind } from '../reference';
import { count, type System } from '../system';
import { resolveId, Step } from './step';

export const CONTROL_REFUSALS = [
  'updatePriority',
  'updateLane',
  'updateRunAt',
  'updateDelay',
  'retryAllLimit0',
  'retryAllLimitOver',
  'drainLimitOver',
  'drainCursor',
  'cleanState',
  'cleanAge',
  'cleanCandidatesOfDead',
  'cleanCandidatesOver',
  'cleanCandidateId',
  'obliterateLimit0',
  'obliterateCursor',
  'promoteJobEventsMaxLen',
] as const;
export type ControlRefusal = (typeof CONTROL_REFUSALS)[number];

export class ControlRefused extends Step {
  constructor(
    readonly kind: ControlRefusal,
    readonly index: number,
  ) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return m.seqOf.size > 0;
  }
  toString(): string {
    return `refused job control: ${this.kind}`;
  }
  /** The call, and the kind of write it is. */
  private call(
    m: Model,
    r: System,
    requestId: (kind: WriteKind) => string,
  ): [WriteKind, () => Promise<unknown>] {
    const ctx = r.ctx;
    const waiting = resolveId(m, m.inPlace('pending').length > 0 ? 'pending' : 'schedule', this.index);
    const scheduled = resolveId(m, 'schedule', this.index) as JobId;
    const clean = (
      state: CleanState,
      more: { olderThanMs?: number; limit?: number; candidates?: JobId[] },
    ) => {
      const id = requestId('clean');
      return [
        'clean',
        () => cleanChunk(ctx, { state, olderThanMs: 0, limit: CONTROL_CHUNK_MAX, ...more }, id),
      ] as [WriteKind, () => Promise<unknown>];
    };
    const obliterate = (limit: number, cursor: string): [WriteKind, () => Promise<unknown>] => {
      const id = requestId('obliterate');
      return ['obliterate', () => obliterateChunk(ctx, { force: true, limit, removedBefore: 0, cursor }, id)];
    };
    const update = (record: Parameters<typeof updateJob>[2]): [WriteKind, () => Promise<unknown>] => {
      const id = requestId('updateJob');
      return ['updateJob', () => updateJob(ctx, waiting, record, id)];
    };
    switch (this.kind) {
      case 'updatePriority':
        return update({ priority: 10 });
      case 'updateLane':
        return update({ lane: 'no spaces' });
      case 'updateRunAt':
        return update({ runAtMs: -1 });
      case 'updateDelay':
        return update({ delayMs: 1.5 });
      case 'retryAllLimit0':
      case 'retryAllLimitOver': {
        const id = requestId('retryAll');
        const limit = this.kind === 'retryAllLimit0' ? 0 : CONTROL_CHUNK_MAX + 1;
        return ['retryAll', () => retryDeadChunk(ctx, limit, id)];
      }
      case 'drainLimitOver':
      case 'drainCursor': {
        const id = requestId('drain');
        const over = this.kind === 'drainLimitOver';
        const options = {
          keepScheduled: false,
          limit: over ? CONTROL_CHUNK_MAX + 1 : 1,
          cursor: over ? WALK_START : 'x1',
        };
        return ['drain', () => drainChunk(ctx, options, id)];
      }
      case 'cleanState':
        return clean('active' as CleanState, {});
      case 'cleanAge':
        return clean('dead', { olderThanMs: -1 });
      case 'cleanCandidatesOfDead':
        return clean('dead', { candidates: [scheduled] });
      case 'cleanCandidatesOver':
        return clean('schedule', { limit: 1, candidates: [scheduled, scheduled] });
      case 'cleanCandidateId':
        return clean('schedule', { candidates: ['JOBnot-an-id' as JobId] });
      case 'obliterateLimit0':
        return obliterate(0, WALK_START);
      case 'obliterateCursor':
        return obliterate(CONTROL_CHUNK_MAX, 'r10:0');
      case 'promoteJobEventsMaxLen': {
        const id = requestId('promoteJob');
        return ['promoteJob', () => promoteJob({ ...ctx, eventsMaxLen: 1.5 }, scheduled, id)];
      }
    }
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const before = await r.snapshot(m);
    let sentId = '';
    const [kind, run] = this.call(m, r, (k) => (sentId = r.requestId(k)));
    const outcome = await r.send(m, { kind, requestId: sentId, lost: false, run });
    r.refused(m, outcome, InvalidArgumentError, `refused ${this.kind}`);
    count(`job control refused: ${this.kind}`);
    await r.expectUnchanged(m, before, 0, `a refused ${this.kind}`);
  }
}
