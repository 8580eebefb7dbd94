import { IsString } from 'class-validator';
import { Optional } from '../../queues/dto/validators';

/** Query of GET /dashboard/api/events: the one queue whose job events the page wants, if any. */
export class DashboardEventsQuery {
  /** A queue name (the keyspace's rule, checked by the handler); given twice it is an array, refused here. */
  @Optional()
  @IsString()
  readonly queue?: string;
}
