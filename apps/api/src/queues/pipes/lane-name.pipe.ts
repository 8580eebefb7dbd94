import { assertLaneName } from '@app/echomq/internal';
import { Injectable, type PipeTransform } from '@nestjs/common';

/** Gates the :lane path parameter with the keyspace's rule: a bad name is a 400 and never reaches Redis. */
@Injectable()
export class LaneNamePipe implements PipeTransform<unknown, string> {
  transform(value: unknown): string {
    return assertLaneName(value);
  }
}
