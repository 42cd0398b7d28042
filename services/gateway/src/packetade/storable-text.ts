import { z } from 'zod';

/**
 * A string Postgres can store: NUL characters and lone surrogates are refused with a 400 here,
 * instead of failing at the database.
 */
export function storableText(max: number) {
  return z
    .string()
    .max(max)
    .refine((value) => !/\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(value), 'must not contain NUL characters or lone surrogates');
}
