import { z } from 'zod';
import { ComputerNameSchema, ValidationError } from '@packetagent/contracts';

/** A computer name from the path, checked before it goes anywhere. */
export function computerNameOf(raw: string): string {
  const parsed = ComputerNameSchema.safeParse(raw);
  if (!parsed.success) throw new ValidationError('invalid computer name', [{ path: 'name', message: parsed.error.issues[0]?.message ?? 'not a computer name' }]);
  return parsed.data;
}

/** The name's pattern, for the OpenAPI description of the path parameter. */
export const COMPUTER_NAME_PATTERN = (z.toJSONSchema(ComputerNameSchema) as { pattern?: string }).pattern;
