import type { ModelRequest, ModelTurn, ProviderRouter, ResolvedModel } from '@packetagent/providers';
import type { McpCatalogue, ToolRegistry } from '@packetagent/tools';
import type { PlanRequest } from '../../run/run.intent';
import type { ModelPort } from '../ports';

/** The provider router for one resolved model. */
export class RouterModel implements ModelPort {
  readonly free: boolean;

  constructor(
    private readonly router: ProviderRouter,
    private readonly tools: ToolRegistry,
    private readonly model: ResolvedModel,
    private readonly mcp?: McpCatalogue,
  ) {
    const { pricing } = model.entry;
    this.free = pricing.inputPerMTokUsd === 0 && pricing.outputPerMTokUsd === 0;
  }

  estimateUsd(request: PlanRequest): number {
    return this.router.estimateCostUsd(this.toModelRequest(request));
  }

  complete(request: PlanRequest, signal: AbortSignal): Promise<ModelTurn> {
    return this.router.complete(this.toModelRequest(request), { signal });
  }

  private toModelRequest(request: PlanRequest): ModelRequest {
    return {
      model: this.model,
      system: request.system,
      messages: request.messages,
      tools: this.tools.describe(request.tools, this.mcp),
      maxOutputTokens: request.maxOutputTokens,
      turn: request.iteration - 1,
      ...(request.outputSchema ? { outputSchema: request.outputSchema } : {}),
    };
  }
}
