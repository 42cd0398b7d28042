import { z } from 'zod';
import { jsonIssues } from '@packetagent/contracts';

/**
 * A string Postgres can store: NUL characters and lone surrogates are refused with a 400 here,
 * instead of failing at the database.
 */
export function storableText(max: number) {
  return z
    .string()
    .max(max)
    .refine((value) => jsonIssues(value).length === 0, 'must not contain NUL characters or lone surrogates');
}
