import type { QueueSystem, SystemId } from './types';

/** The order every round runs the systems in: A B C D, A B C D, ... */
export const SYSTEM_IDS: readonly SystemId[] = ['echomq', 'bullmq', 'bullmq-remove', 'beequeue'];

/** The systems EchoMQ's ratio columns divide by, in column order. */
export const PEER_IDS: readonly SystemId[] = SYSTEM_IDS.filter((id) => id !== 'echomq');

/** Loads one adapter (and only its library, which keeps worker hosts lean). */
export async function loadSystem(id: SystemId): Promise<QueueSystem> {
  switch (id) {
    case 'echomq':
      return (await import('./echomq')).echomq;
    case 'bullmq':
      return (await import('./bullmq')).bullmq;
    case 'bullmq-remove':
      return (await import('./bullmq')).bullmqRemove;
    case 'beequeue':
      return (await import('./beequeue')).beequeue;
  }
}

export function isSystemId(value: unknown): value is SystemId {
  return typeof value === 'string' && (SYSTEM_IDS as readonly string[]).includes(value);
}
