import { NodeLeaseLostError, type JobId } from '../ids';
import { JOB_ID_READY_TIMEOUT_MS, type JobIdMinter } from '../module/tokens';

/**
 * Job ids for the enqueue path. Ids are minted only on a node number this process holds
 * (docs/model.md, "Why ids are unique"); while its lease is being confirmed or taken back,
 * minting waits for it, boundedly (JOB_ID_READY_TIMEOUT_MS). mintOne is the synchronous form
 * a single enqueue takes first, so a held lease costs it no await.
 */
export class IdMinting {
  constructor(private readonly minter: JobIdMinter) {}

  /** One id now, or undefined while the lease does not allow minting (then mint() waits for it). */
  mintOne(tag?: number): JobId | undefined {
    try {
      return this.minter.mint(tag) as JobId;
    } catch (error) {
      if (!(error instanceof NodeLeaseLostError)) throw error;
      return undefined;
    }
  }

  /** `count` ids carrying `tag` (the partition index), waiting for the lease if need be. */
  async mint(count: number, tag?: number): Promise<JobId[]> {
    try {
      return this.mintNow(count, tag);
    } catch (error) {
      if (!(error instanceof NodeLeaseLostError)) throw error;
      await this.minter.ready(JOB_ID_READY_TIMEOUT_MS);
      // A batch that met the lease's end part way is minted again whole: its first ids are dropped.
      return this.mintNow(count, tag);
    }
  }

  private mintNow(count: number, tag: number | undefined): JobId[] {
    const ids = new Array<JobId>(count);
    for (let index = 0; index < count; index++) ids[index] = this.minter.mint(tag) as JobId;
    return ids;
  }
}
