import { QueueService } from '@app/echomq';
import { Controller } from '@nestjs/common';

/** Placeholder: routes land with the feature. */
@Controller('queues/:queue')
export class HistoryController {
  constructor(readonly queues: QueueService) {}
}
