import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';

/**
 * OpenAPI for "any JSON value". Without it @nestjs/swagger reads the `unknown` property
 * type as an object, and generated clients would refuse a string or number payload.
 */
export const ANY_JSON: Pick<SchemaObject, 'oneOf' | 'nullable'> = {
  nullable: true,
  oneOf: [
    { type: 'object', additionalProperties: true },
    { type: 'array', items: {} },
    { type: 'string' },
    { type: 'number' },
    { type: 'boolean' },
  ],
};
