import { ChangeSignal } from './change-signal';

/** What the pool reads of one loop's slots (see JobSlots). */
export interface HeldSlots {
  /** Handlers running on an unsettled attempt. */
  readonly runningCount: number;
  /** Handlers still running after their attempt timed out. */
  readonly lingeringCount: number;
}

/**
 * How many jobs one claim loop may claim now, and what the loop tells of its state so that the
 * slots it does not use can go to the other loops of its queue.
 */
export interface SlotBudget {
  /** Slots this loop may fill with its next claim now; 0: wait for changed(). */
  free(): number;
  /** Resolves at the next change that may free a slot for this loop (its own, or another loop's). */
  changed(): Promise<void>;
  /** A claim of `count` jobs is on its way: its slots are held until release(). */
  reserve(count: number): void;
  /** The claim is back (its jobs launched, each now holding its own slot) or failed. */
  release(count: number): void;
  /** The loop is about to claim (it started): its share is kept for it. */
  ready(): void;
  /** The loop rests (waits for work, sleeps off a limit or a failure, stopped): its share is lent meanwhile. */
  park(): void;
  /**
   * The loop's last claim failed (its shard is down, say): until claimSucceeded(), it asks for
   * one slot at a time, so a claim that may hang for a command deadline holds one slot, not a
   * share the healthy loops could fill.
   */
  claimFailed(): void;
  /** A claim went through: the loop asks for its full share again. */
  claimSucceeded(): void;
}

/** One loop as the dealer sees it: the slots it holds, and its place in the line (lower is sooner). */
export interface Holder {
  readonly held: number;
  readonly ticket: number;
  /** The most it may hold once dealt to (none: no bound but the free slots). */
  readonly limit?: number;
}

/**
 * Deals `free` slots one at a time to the holder that holds the fewest, ties to the lowest
 * ticket, skipping a holder once it holds its limit, and returns how many each got (in input
 * order). A holder the levels would raise past its limit gets up to it, and the slots it leaves
 * are dealt again among the others, until no limit is passed: one round per limited holder at
 * most. Each round is O(holders log holders) (see dealLevels), whatever `free` is.
 */
export function dealSlots(free: number, holders: readonly Holder[]): number[] {
  const grants = holders.map(() => 0);
  let open = holders.map((_, index) => index);
  let left = free;
  for (;;) {
    const dealt = dealLevels(
      left,
      open.map((index) => holders[index]),
    );
    const over = open.filter(
      (index, at) => holders[index].held + dealt[at] > (holders[index].limit ?? Infinity),
    );
    if (over.length === 0) {
      open.forEach((index, at) => (grants[index] = dealt[at]));
      return grants;
    }
    for (const index of over) {
      const { held, limit = held } = holders[index];
      grants[index] = Math.max(0, limit - held);
      left -= grants[index];
    }
    open = open.filter((index) => !over.includes(index));
  }
}

/**
 * dealSlots without limits, computed by levels, not one slot at a time: the lowest holders are
 * raised together, and what is left after the last full level goes to those with the lowest
 * tickets. O(holders log holders), whatever `free` is.
 */
function dealLevels(free: number, holders: readonly Holder[]): number[] {
  const grants = holders.map(() => 0);
  if (free <= 0 || holders.length === 0) return grants;
  const byHeld = holders
    .map((_, index) => index)
    .sort((a, b) => holders[a].held - holders[b].held || holders[a].ticket - holders[b].ticket);
  let left = free;
  let level = holders[byHeld[0]].held;
  let raised = 1;
  for (;;) {
    while (raised < byHeld.length && holders[byHeld[raised]].held <= level) raised++;
    const next = raised < byHeld.length ? holders[byHeld[raised]].held : Infinity;
    const cost = (next - level) * raised;
    if (cost > left) break;
    left -= cost;
    level = next;
  }
  const step = Math.floor(left / raised);
  level += step;
  left -= step * raised;
  const lowest = byHeld.slice(0, raised);
  for (const index of lowest) grants[index] = level - holders[index].held;
  lowest.sort((a, b) => holders[a].ticket - holders[b].ticket);
  for (let extra = 0; extra < left; extra++) grants[lowest[extra]] += 1;
  return grants;
}

/**
 * The concurrency of one queue in one process, shared by its claim loops (one per partition):
 * however many partitions, at most `concurrency` handlers of the queue run here at once.
 *
 * Fair means: free slots go to the loops that want work, the one holding the fewest first, and
 * among equals to the one that waited longest since it last got slots. A loop with no work
 * (blocked on its wake list, rate-limited, backing off, stopped) is parked and lends its share,
 * so one busy partition can use every slot while the others are idle; when an idle one gets
 * work, the slots freed next go to it until the loops hold as many as each other (within one).
 * No running handler is ever stopped to give its slot back: a partition that wakes while the
 * slots are lent waits for the borrower's next handler to return. With every partition busy,
 * each holds concurrency/N slots (rounded, the extra ones turning), and with fewer slots than
 * partitions they turn one by one.
 *
 * A loop that is about to claim (it started, or it woke and is claiming) keeps its share: a
 * claim may come back with fewer jobs than asked for, and then the loop parks. A claim on its
 * way holds the slots it asked for (reserve) until its jobs hold their own. A loop whose last
 * claim failed asks for one slot at a time until a claim goes through: a shard that is down
 * answers each claim only at the command deadline, and the slots a full-share claim held meanwhile
 * would be taken from the loops that can use them. Handlers that outlived their timeout are free
 * up to `concurrency` of them in the whole queue, then each takes a slot, as in one loop (see
 * JobSlots).
 */
export class SharedSlots {
  /** Told of every change of every member loop (theirs forward here); forwards to the process's gate. */
  readonly changes: ChangeSignal;
  private readonly members = new Set<PoolMember>();
  private tickets = 0;

  constructor(
    readonly concurrency: number,
    forward?: ChangeSignal,
  ) {
    this.changes = new ChangeSignal(forward);
  }

  /** The budget of one loop of the queue. */
  join(slots: HeldSlots): SlotBudget {
    const member = new PoolMember(this, slots);
    this.members.add(member);
    return member;
  }

  /** A loop that never started leaves the pool (its queue turned out to need no loop). */
  remove(budget: SlotBudget): void {
    if (budget instanceof PoolMember) this.members.delete(budget);
    this.changes.notify();
  }

  /** Slots held now over every loop: running handlers, claims on their way, lingering ones past concurrency. */
  get taken(): number {
    let held = 0;
    let lingering = 0;
    for (const member of this.members) {
      held += member.held;
      lingering += member.slots.lingeringCount;
    }
    return held + Math.max(0, lingering - this.concurrency);
  }

  /** The slots `member` may take now (see the class comment). */
  grantFor(member: PoolMember): number {
    const free = this.concurrency - this.taken;
    if (free <= 0) return 0;
    const wanting = [...this.members].filter((each) => each.wanting || each === member);
    if (wanting.length === 1) return Math.max(0, Math.min(free, (member.limit ?? Infinity) - member.held));
    return dealSlots(free, wanting)[wanting.indexOf(member)];
  }

  /** A place at the end of the line. */
  nextTicket(): number {
    return ++this.tickets;
  }
}

class PoolMember implements SlotBudget, Holder {
  private reserved = 0;
  /** Set while the loop's last claim failed: it asks for one slot more than its running handlers. */
  private failing = false;
  wanting = false;
  ticket = 0;

  constructor(
    private readonly pool: SharedSlots,
    readonly slots: HeldSlots,
  ) {}

  get held(): number {
    return this.slots.runningCount + this.reserved;
  }

  get limit(): number | undefined {
    return this.failing ? this.slots.runningCount + 1 : undefined;
  }

  free(): number {
    this.ready();
    return this.pool.grantFor(this);
  }

  changed(): Promise<void> {
    return this.pool.changes.changed();
  }

  reserve(count: number): void {
    this.reserved += count;
    // Served: behind every loop still waiting.
    this.ticket = this.pool.nextTicket();
  }

  release(count: number): void {
    this.reserved = Math.max(0, this.reserved - count);
    this.pool.changes.notify();
  }

  ready(): void {
    if (this.wanting) return;
    this.wanting = true;
    this.ticket = this.pool.nextTicket();
  }

  park(): void {
    if (!this.wanting) return;
    this.wanting = false;
    this.pool.changes.notify();
  }

  claimFailed(): void {
    this.failing = true;
  }

  claimSucceeded(): void {
    this.failing = false;
  }
}
