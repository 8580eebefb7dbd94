/** Mints the next job id; provided by EchoMqModule from the leased (or configured) node number. */
export type JobIdMinter = () => string;
export const JOB_ID_MINTER = Symbol('ECHOMQ_JOB_ID_MINTER');
