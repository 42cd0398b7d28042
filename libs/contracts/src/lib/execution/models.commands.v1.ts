import { z } from 'zod';
import { defineCommand } from '../commands';
import { Identifiers } from '../envelope';
import { MAX_PACKAGE_REQUIREMENTS } from '../packetade/worker-package.v1';

/**
 * Whether this deployment's supervisor can serve model providers, asked before a deploy (a
 * package preflight lists the providers its worker needs). Served by every supervisor replica
 * from the provider settings and keys it runs with; nothing is called on the providers.
 */

const workspaceId = z.string().regex(Identifiers.workspace);

/**
 * A provider as a package names it: `anthropic`, `openai`, `gemini`, `openrouter`, `minimax`,
 * `local`, `scripted`, or `preset:<default|fast|local>`. A name the supervisor does not know is
 * answered as not available, with the reason, rather than refused.
 */
export const RequestedModelProviderSchema = z.string().min(1).max(200);

export const CheckModelProvidersRequestSchema = z.object({
  workspaceId,
  providers: z.array(RequestedModelProviderSchema).min(1).max(MAX_PACKAGE_REQUIREMENTS),
});
export type CheckModelProvidersRequest = z.infer<typeof CheckModelProvidersRequestSchema>;

export const ModelProviderAvailabilitySchema = z.object({
  /** The name as requested. */
  provider: z.string(),
  available: z.boolean(),
  /** Why it is not available, and what to set; null when it is. */
  reason: z.string().nullable(),
  /** For a preset, the provider it resolves to now (null when none is set up); absent for a provider. */
  resolvesTo: z.string().nullable().optional(),
});
export type ModelProviderAvailability = z.infer<typeof ModelProviderAvailabilitySchema>;

export const CheckModelProvidersResultSchema = z.object({
  /** One answer per requested name, in the order asked. */
  providers: z.array(ModelProviderAvailabilitySchema),
});
export type CheckModelProvidersResult = z.infer<typeof CheckModelProvidersResultSchema>;

export const SupervisorModelCommands = {
  check: defineCommand('supervisor.models.check', CheckModelProvidersRequestSchema, CheckModelProvidersResultSchema),
} as const;
