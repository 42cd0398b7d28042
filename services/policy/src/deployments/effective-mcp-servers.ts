import { Inject, Injectable } from '@nestjs/common';
import { DomainError, MCP_TOOL, parsePayload, validateStoredDefinition, type JsonValue } from '@packetagent/contracts';
import { PayloadNotFoundError, PayloadStore } from '@packetagent/eventstore';
import type { McpServerPins } from '../grants/mcp-grants';
import { POLICY_OPTIONS, type ResolvedPolicyOptions } from '../policy.options';

/**
 * The MCP servers of a deployment's effective definition, with the tools its version pinned,
 * read from the content-addressed copy intake keeps before it publishes the deployment. Read
 * only when the grants name `mcp`: a definition that cannot be read pins nothing, so its MCP
 * grants allow no call.
 */
@Injectable()
export class EffectiveMcpServers {
  constructor(
    private readonly payloads: PayloadStore,
    @Inject(POLICY_OPTIONS) private readonly options: ResolvedPolicyOptions,
  ) {}

  async of(workspaceId: string, effectiveDigest: string, tools: readonly JsonValue[]): Promise<McpServerPins[]> {
    const grantsMcp = tools.some((grant) => typeof grant === 'object' && grant !== null && !Array.isArray(grant) && grant['tool'] === MCP_TOOL);
    if (!grantsMcp) return [];
    try {
      const definition = validateStoredDefinition(parsePayload(await this.payloads.get(workspaceId, effectiveDigest)));
      return (definition.mcp ?? []).map((server) => ({ name: server.name, tools: server.tools ?? [] }));
    } catch (error) {
      // A store that does not answer is retried with the event; a missing or invalid definition never becomes readable.
      if (!(error instanceof PayloadNotFoundError) && !(error instanceof DomainError && error.code === 'invalid_definition')) throw error;
      this.options.log('warn', 'effective definition not readable: its MCP grants allow no call', { effectiveDigest, code: (error as DomainError).code });
      return [];
    }
  }
}
