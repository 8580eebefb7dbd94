import { STATE_SETS } from '@app/echomq/internal';
import { Transform } from 'class-transformer';
import { IsIn, IsString, MaxLength } from 'class-validator';
import {
  digitsToNumber,
  IsIntegerInRange,
  IsLaneName,
  IsStringOfLength,
  Optional,
} from '../../queues/dto/validators';

export const DASHBOARD_LIST_STATES = [...STATE_SETS, 'completed'] as const;
export const DASHBOARD_LIST_MAX = 200;
export const DASHBOARD_LIST_DEFAULT = 50;

/** Query of GET /dashboard/api/queues/:queue/jobs (query strings are text: limit is converted explicitly). */
export class DashboardJobListQuery {
  @Optional()
  @IsIn(DASHBOARD_LIST_STATES)
  readonly state?: (typeof DASHBOARD_LIST_STATES)[number];

  /** A case-insensitive part of the job's name. */
  @Optional()
  @IsStringOfLength(1, 200)
  readonly name?: string;

  @Optional()
  @IsLaneName()
  readonly lane?: string;

  @Optional()
  @Transform(digitsToNumber)
  @IsIntegerInRange(1, DASHBOARD_LIST_MAX)
  readonly limit?: number;

  /** The `next` of the previous page (an active or schedule cursor of a partitioned queue counts per partition). */
  @Optional()
  @IsString()
  @MaxLength(256)
  readonly after?: string;
}
