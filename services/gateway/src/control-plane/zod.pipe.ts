import type { PipeTransform } from '@nestjs/common';
import type { z } from 'zod';
import { ValidationError } from '@packetagent/contracts';

/** Validates a body or query with its schema; failures become a 400 problem listing every path. */
export class ZodPipe<S extends z.ZodType> implements PipeTransform<unknown, z.output<S>> {
  constructor(
    private readonly schema: S,
    private readonly what = 'request body',
  ) {}

  transform(value: unknown): z.output<S> {
    const result = this.schema.safeParse(value ?? {});
    if (result.success) return result.data;
    throw new ValidationError(
      `invalid ${this.what}`,
      result.error.issues.map((issue) => ({ path: issue.path.map(String).join('.') || '(root)', message: issue.message })),
    );
  }
}
