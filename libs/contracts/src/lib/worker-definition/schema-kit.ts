import { z } from 'zod';
import { definitionErrorMap } from './issues';

// The building blocks every part of a definition's schema is made of.

/** A strict object whose unknown-key message lists the keys it does allow. */
export function strict<Shape extends z.ZodRawShape>(shape: Shape) {
  const allowed = Object.keys(shape).join(', ');
  return z.strictObject(shape, {
    error: (issue) => (issue.code === 'unrecognized_keys' ? `unknown key (allowed: ${allowed})` : undefined),
  });
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Parses a nested variant chosen in a transform; its issues are worded with the same map as
 * the rest of a definition, since a nested parse does not inherit the caller's map.
 */
export function parseWith<T>(schema: z.ZodType<T>, value: unknown, ctx: z.core.$RefinementCtx): T {
  const result = schema.safeParse(value, { error: definitionErrorMap });
  if (result.success) return result.data;
  for (const issue of result.error.issues) ctx.addIssue({ ...issue });
  return z.NEVER;
}

/**
 * One of several shapes told apart by which key is present (`{preset}` or `{provider}`,
 * `{cron}` or `{webhook}`...): a precise message when none or several are present, and the
 * chosen shape's own issues otherwise, instead of a union's "no variant matched".
 */
export function oneOf<T>(rule: string, variants: ReadonlyArray<readonly [string, z.ZodType<T>]>): z.ZodType<T> {
  return z.unknown().transform((value, ctx): T => {
    if (value === undefined) {
      ctx.addIssue({ code: 'custom', message: `required (${rule})` });
      return z.NEVER;
    }
    if (!isPlainObject(value)) {
      ctx.addIssue({ code: 'custom', message: `expected an object with ${rule}` });
      return z.NEVER;
    }
    const present = variants.filter(([key]) => Object.hasOwn(value, key));
    if (present.length !== 1) {
      const found = present.map(([key]) => `"${key}"`).join(' and ');
      ctx.addIssue({ code: 'custom', message: present.length === 0 ? `needs ${rule}` : `has ${found}; needs ${rule}` });
      return z.NEVER;
    }
    return parseWith(present[0]![1], value, ctx);
  }) as unknown as z.ZodType<T>;
}

export const CREDENTIAL_NAME_PATTERN = /^[a-z][a-z0-9_]{0,62}$/;
export const CredentialName = z
  .string()
  .regex(CREDENTIAL_NAME_PATTERN, { error: 'a credential name starts with a lower-case letter and has only a-z, 0-9 and "_" (at most 63 characters)' });

export const ApprovalSchema = z.enum(['never', 'first_use', 'always']);

export function duplicates<T>(items: readonly T[], key: (item: T) => string = String): Array<{ index: number; first: number; value: string }> {
  const seen = new Map<string, number>();
  const found: Array<{ index: number; first: number; value: string }> = [];
  items.forEach((item, index) => {
    const value = key(item);
    const first = seen.get(value);
    if (first === undefined) seen.set(value, index);
    else found.push({ index, first, value });
  });
  return found;
}
