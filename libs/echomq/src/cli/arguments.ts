import { InvalidArgumentError as UsageError } from 'commander';
import { PRIORITY_MAX, PRIORITY_MIN } from '../keyspace';

/**
 * Parsers commander runs on option values: a refusal is a usage error (exit 2, commander's
 * message). Queue names, ids and lanes are checked by the library itself, as its typed errors
 * (INVALID_QUEUE_NAME, INVALID_JOB_ID, INVALID_ARGUMENT), before anything is sent.
 */
export function integerOption(min: number, max: number): (value: string) => number {
  return (value: string): number => {
    const n = /^-?[0-9]+$/.test(value) ? Number(value) : Number.NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      throw new UsageError(`expected an integer from ${min} to ${max}`);
    }
    return n;
  };
}

export const priorityOption = integerOption(PRIORITY_MIN, PRIORITY_MAX);
