import { type ArgumentMetadata, BadRequestException, ValidationPipe } from '@nestjs/common';
import { droppedKeys } from './dropped-keys';
import { jsonShapeProblems } from './json-guard';

/**
 * The global ValidationPipe (whitelist + forbidNonWhitelisted + transform, no implicit
 * conversion), made strict where the stock pipe is silent:
 *  - bodies that are nested too deep or use prototype keys are refused up front (json-guard);
 *  - unknown keys that class-transformer skips (inherited names such as "toString") are
 *    reported like any other unknown field.
 */
export class StrictValidationPipe extends ValidationPipe {
  constructor() {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      // Types are checked, never coerced: "5" is not a number of milliseconds.
      transformOptions: { enableImplicitConversion: false },
      // One message per bad field.
      stopAtFirstError: true,
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body' || metadata.type === 'query') {
      const problems = jsonShapeProblems(value);
      if (problems.length > 0) throw new BadRequestException(problems);
    }
    const transformed: unknown = await super.transform(value, metadata);
    const dropped = droppedKeys(value, transformed);
    if (dropped.length > 0) {
      throw new BadRequestException(dropped.map((path) => `property ${path} should not exist`));
    }
    return transformed;
  }
}
