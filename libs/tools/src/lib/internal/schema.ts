import { jsonIssues, type JsonObject, type JsonValue, type ValidationIssue } from '@packetagent/contracts';
import { z } from 'zod';

const PLAIN_KEY = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/** `['headers', 'x-a', 0]` → `headers["x-a"][0]`; the root is `(root)`. */
export function renderPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (typeof segment === 'string' && PLAIN_KEY.test(segment)) out += out ? `.${segment}` : segment;
    else out += `[${JSON.stringify(String(segment))}]`;
  }
  return out || '(root)';
}

/** Zod issues as `{path, message}`; an unknown-keys issue becomes one issue per key. */
export function issuesOf(error: z.ZodError): ValidationIssue[] {
  return error.issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ path: renderPath([...issue.path, key]), message: 'unknown key' }))
      : [{ path: renderPath(issue.path), message: issue.message }],
  );
}

/**
 * Any JSON value. Declared as unknown so the JSON Schema shown to the model is `{}` rather
 * than a recursive definition some providers refuse.
 */
export function jsonValue(description: string, maxChars = 1024 * 1024): z.ZodType<JsonValue> {
  return z
    .unknown()
    .superRefine((value, ctx) => {
      if (value === undefined) return;
      const issues = jsonIssues(value);
      for (const issue of issues) ctx.addIssue({ code: 'custom', message: issue.path ? `${issue.path}: ${issue.message}` : issue.message });
      if (issues.length === 0 && JSON.stringify(value).length > maxChars) ctx.addIssue({ code: 'custom', message: `must be at most ${maxChars} characters as JSON` });
    })
    .describe(description) as z.ZodType<JsonValue>;
}

/** The JSON Schema of a tool's arguments as the model sees it (input side: defaults optional). */
export function toParameters(schema: z.ZodType): JsonObject {
  const generated = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonObject;
  delete generated['$schema'];
  return generated;
}
