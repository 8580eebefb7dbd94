import { ApiProperty } from '@nestjs/swagger';
import { STATUS_CODES } from 'node:http';

/** The JSON body of every error the api sends (the health endpoint keeps Terminus's own shape). */
export class ErrorBody {
  @ApiProperty({ example: 400 })
  readonly statusCode!: number;

  @ApiProperty({
    required: false,
    description:
      "The stable code of an EchoMQ error (docs/http.md), the field to switch on; absent on the api's own " +
      'refusals (validation, routing, body size, auth, throttling)',
    example: 'INVALID_JOB_ID',
  })
  readonly code?: string;

  @ApiProperty({ description: 'The HTTP reason phrase', example: 'Bad Request' })
  readonly error!: string;

  @ApiProperty({
    description: 'What went wrong; validation failures list one message per problem',
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
    example: ['delayMs must not be less than 0'],
  })
  readonly message!: string | string[];
}

export function errorBody(statusCode: number, message: string | string[]): ErrorBody {
  return { statusCode, error: STATUS_CODES[statusCode] ?? 'Error', message };
}
