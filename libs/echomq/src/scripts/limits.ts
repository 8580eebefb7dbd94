/**
 * The bounds every script call lives within (docs/reliability.md, "Batch bounds").
 *
 * One script call blocks Redis while it runs, so each moves a bounded number of jobs:
 * at most SCRIPT_BATCH_MAX, which on a 2-core machine is a few milliseconds of Redis
 * time for the heaviest transitions (enqueue and claim, about 10 µs a job; measured by
 * bench/batch-cost.ts). Callers with more work make more calls
 * (the claim loop, the reaper) or are refused before anything is sent (enqueueMany).
 */
export const SCRIPT_BATCH_MAX = 500;

/**
 * Most jobs one enqueueMany call takes; it stays all or nothing, so it is one script call. Twice
 * SCRIPT_BATCH_MAX: a plain enqueue costs Redis about half what a claim does per job, so a call of
 * this many blocks Redis about as long as the heaviest calls of SCRIPT_BATCH_MAX (bench/batch-cost.ts).
 */
export const ENQUEUE_MANY_MAX = 1_000;

/** Most payload bytes one enqueue script call carries (merged calls included). */
export const ENQUEUE_CALL_MAX_BYTES = 16 * 1024 * 1024;

/** Largest single payload a queue may be configured to accept (maxPayloadBytes). */
export const PAYLOAD_MAX_BYTES = ENQUEUE_CALL_MAX_BYTES;

/**
 * Lua's unpack() fails past about 8,000 values (LUAI_MAXCSTACK), so scripts pass long
 * lists to Redis in slices of this many values (see call_in_slices in the prelude).
 */
export const LUA_UNPACK_SLICE = 4_000;

/** A job's result larger than this is left out of its 'completed' event (the row keeps it briefly). */
export const EVENT_RESULT_MAX_BYTES = 1_024;

/** All results one 'completed' event carries, together; later ones are left out like large ones. */
export const EVENT_RESULTS_TOTAL_MAX_BYTES = 16 * 1_024;

/** An error text longer than this is cut in events (the row keeps up to ERROR_TEXT_MAX). */
export const EVENT_ERROR_MAX_BYTES = 1_024;

/** The longest error text a row keeps. */
export const ERROR_TEXT_MAX = 4_096;

/** The longest stack trace of a failed attempt a row keeps (row 'es'; never in events). */
export const ERROR_STACK_MAX = 8_192;

/**
 * The most bytes of trace context a job carries (row field 'tc': the producer's W3C
 * traceparent and tracestate as JSON, docs/tracing.md). A traceparent is 55 bytes and a
 * tracestate at most 512 by the W3C limit, so this holds both with room for a few more
 * headers a propagator may add; a larger context is cut down by the producer, never refused.
 */
export const TRACE_CONTEXT_MAX_BYTES = 1_024;

/** How long a finished job whose result was left out of its event keeps its row, for waitFor. */
export const LEFT_OUT_RESULT_KEEP_MS = 60_000;
