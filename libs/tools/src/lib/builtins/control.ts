import type { JsonValue } from '@packetagent/contracts';
import { redactBulk } from '../internal/text';
import type { OperationDescriptor } from '../tool.types';

/**
 * The policy-facing part every control tool shares: no verb, no resource, no effect and no
 * credential. The supervisor interprets these calls; the registry never executes them.
 */
export function controlOperation<Args>(): Pick<OperationDescriptor<Args>, 'verb' | 'resource' | 'mutating' | 'idempotentByKey' | 'credentials' | 'redact' | 'control'> {
  return {
    verb: () => '',
    resource: () => null,
    mutating: () => false,
    idempotentByKey: () => false,
    credentials: () => [],
    redact: (args) => {
      const redacted: Record<string, JsonValue> = {};
      for (const [key, value] of Object.entries(args as Record<string, JsonValue | undefined>)) {
        if (value !== undefined) redacted[key] = Array.isArray(value) ? value.map((item) => redactBulk(item)) : redactBulk(value);
      }
      return redacted;
    },
    control: true,
  };
}
