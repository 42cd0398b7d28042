import type { z } from 'zod';
import type { ValidationIssue } from '../errors';

const PLAIN_KEY = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/** `['tools', 1, 'resources', 0]` → `tools[1].resources[0]`; odd keys are quoted: `labels["a.b"]`. */
export function renderPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (typeof segment === 'string' && PLAIN_KEY.test(segment)) out += out ? `.${segment}` : segment;
    else out += `[${JSON.stringify(String(segment))}]`;
  }
  return out;
}

function describeInput(input: unknown): string {
  if (input === null) return 'null';
  if (Array.isArray(input)) return 'an array';
  switch (typeof input) {
    case 'object':
      return 'an object';
    case 'string':
      return 'a string';
    case 'number':
      return Number.isInteger(input) ? 'an integer' : 'a number';
    case 'boolean':
      return 'a boolean';
    default:
      return typeof input;
  }
}

const EXPECTED: Record<string, string> = {
  int: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'a boolean',
  object: 'an object',
  record: 'an object',
  array: 'an array',
};

/** Messages for the issues no schema in this folder words itself; each names the rule broken. */
export const definitionErrorMap: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'required';
      return `expected ${EXPECTED[issue.expected] ?? issue.expected}, got ${describeInput(issue.input)}`;
    case 'too_small': {
      const minimum = Number(issue.minimum);
      if (issue.origin === 'number' || issue.origin === 'int') {
        return issue.inclusive ? `must be at least ${minimum}` : `must be greater than ${minimum}`;
      }
      if (minimum === 1) return 'must not be empty';
      return issue.origin === 'string' ? `must be at least ${minimum} characters` : `must have at least ${minimum} items`;
    }
    case 'too_big': {
      const maximum = Number(issue.maximum);
      if (issue.origin === 'number' || issue.origin === 'int') {
        return issue.inclusive ? `must be at most ${maximum}` : `must be less than ${maximum}`;
      }
      return issue.origin === 'string' ? `must be at most ${maximum} characters` : `must have at most ${maximum} items`;
    }
    case 'invalid_value':
      return issue.values.length === 1 ? `must be ${JSON.stringify(issue.values[0])}` : `must be one of: ${issue.values.map(String).join(', ')}`;
    case 'unrecognized_keys':
      return 'unknown key';
    case 'invalid_format':
      return 'does not have the expected format';
    default:
      return undefined;
  }
};

/**
 * Zod issues as `{path, message}` pairs; an unknown-keys issue becomes one issue per key, at
 * the key's own path.
 */
export function toValidationIssues(issues: readonly z.core.$ZodIssue[], prefix: readonly PropertyKey[] = []): ValidationIssue[] {
  return issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ path: renderPath([...prefix, ...issue.path, key]), message: issue.message }))
      : [{ path: renderPath([...prefix, ...issue.path]), message: issue.message }],
  );
}
