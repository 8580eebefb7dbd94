import type { DebounceOptions, JobToEnqueue, ThrottleOptions } from '@app/echomq';
import { DEDUPE_WINDOW_MAX_MS, keyedRuleOf } from '@app/echomq/internal';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ValidateBy } from 'class-validator';

const KEY_MAX = 256;

/** A debounce as the body gives it (the shape for OpenAPI; the library's own check validates it). */
export class DebounceDto implements DebounceOptions {
  @ApiProperty({ minLength: 1, maxLength: KEY_MAX, example: 'reindex-user-42' })
  readonly key!: string;

  @ApiProperty({
    type: 'integer',
    minimum: 1,
    maximum: DEDUPE_WINDOW_MAX_MS,
    description: 'How long the job waits after the latest enqueue with its key',
    example: 2000,
  })
  readonly delayMs!: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: DEDUPE_WINDOW_MAX_MS,
    description: 'The latest it runs, counted from the first enqueue; at least delayMs. Absent: no cap',
    example: 10000,
  })
  readonly maxWaitMs?: number;
}

/** A throttle as the body gives it. */
export class ThrottleDto implements ThrottleOptions {
  @ApiProperty({ minLength: 1, maxLength: KEY_MAX, example: 'digest-user-42' })
  readonly key!: string;

  @ApiProperty({
    type: 'integer',
    minimum: 1,
    maximum: DEDUPE_WINDOW_MAX_MS,
    description: 'The window the first job opens; later enqueues in it return that job',
    example: 60000,
  })
  readonly windowMs!: number;
}

/** What the library says is wrong with one dedupe option alone, or undefined. */
function problem(field: 'debounce' | 'throttle', value: unknown): string | undefined {
  try {
    keyedRuleOf({ [field]: value });
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/**
 * A debounce or throttle object, checked by the library's own rule (so the api and the library
 * refuse the same values and say why; unknown nested fields included). Combinations with other
 * fields (idempotencyKey, delayMs, runAt) are refused by the library, also as 400.
 */
export function IsDedupe(field: 'debounce' | 'throttle'): PropertyDecorator {
  return ValidateBy({
    name: 'isDedupe',
    validator: {
      validate: (value: unknown) => problem(field, value) === undefined,
      defaultMessage: (args) => problem(field, args?.value) ?? `${field} is invalid`,
    },
  });
}

/** Take a nested object exactly as parsed: the rule checks its keys, class-transformer would drop them. */
export const asSent = ({ obj, key }: { obj: Record<string, unknown>; key: string }): unknown => obj[key];

/** The body's debounce and throttle, added to the job the other fields describe. */
export function withDedupe(
  job: JobToEnqueue,
  body: { readonly debounce?: DebounceOptions; readonly throttle?: ThrottleOptions },
): JobToEnqueue {
  return {
    ...job,
    ...(body.debounce !== undefined ? { debounce: body.debounce } : {}),
    ...(body.throttle !== undefined ? { throttle: body.throttle } : {}),
  };
}
