import { applyDecorators } from '@nestjs/common';
import { ApiParam } from '@nestjs/swagger';

/**
 * A lane name as OpenAPI shows it: the keyspace's rule (isValidLaneName, which the api
 * validates with), written once here for the documents.
 */
export const LANE_NAME_PATTERN = '^[A-Za-z0-9_.:@+=-]{1,64}$';

/** OpenAPI descriptions of the path parameters, with the same rules the pipes enforce. */
export const ApiQueueParam = (): MethodDecorator & ClassDecorator =>
  applyDecorators(
    ApiParam({
      name: 'queue',
      description: 'Queue name: 1-64 characters from A-Z a-z 0-9 . _ -',
      schema: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,64}$' },
      example: 'emails',
    }),
  );

export const ApiJobIdParam = (): MethodDecorator =>
  applyDecorators(
    ApiParam({
      name: 'id',
      description: 'Job id: JOB followed by 11 Base62 characters',
      schema: { type: 'string', pattern: '^JOB[0-9A-Za-z]{11}$' },
      example: 'JOB0Ah3kPz9QwE',
    }),
  );

export const ApiLaneParam = (): MethodDecorator =>
  applyDecorators(
    ApiParam({
      name: 'lane',
      description: 'Lane name: 1-64 characters from A-Z a-z 0-9 _ . : @ + = -',
      schema: { type: 'string', pattern: LANE_NAME_PATTERN },
      example: 'tenant-42',
    }),
  );
