import { Inject, Injectable } from '@nestjs/common';
import type { RunPin } from '@packetagent/contracts';
import type { ProviderRouter, ResolvedModel } from '@packetagent/providers';
import type { ToolRegistry } from '@packetagent/tools';
import { RunDefinitions } from '../execution/run-definitions';
import { mcpCatalogueOf } from './mcp-catalogue';
import type { PinnedRun } from '../run/run.intent';
import { taskMessage } from '../run/run.prompt';
import type { RunAggregate } from '../run/run.state';
import { PROVIDER_ROUTER, SUPERVISOR_OPTIONS, TOOL_REGISTRY, type SupervisorOptions } from '../supervisor.options';

/** Everything a decision needs that does not change while a run lives on one version: its definition, model, tools and input. */
@Injectable()
export class RunPinning {
  constructor(
    private readonly definitions: RunDefinitions,
    @Inject(SUPERVISOR_OPTIONS) private readonly options: SupervisorOptions,
    @Inject(PROVIDER_ROUTER) private readonly router: ProviderRouter,
    @Inject(TOOL_REGISTRY) private readonly tools: ToolRegistry,
  ) {}

  /** The run under `pin` (its own by default; another version's for a shadow replay). */
  async pin(state: RunAggregate, pin: RunPin = state.pin!, signal: AbortSignal = new AbortController().signal): Promise<{ pinned: PinnedRun; model: ResolvedModel }> {
    const definition = await this.definitions.load(state.workspaceId, pin, signal);
    const model = await this.router.resolve(definition.model);
    const mcp = mcpCatalogueOf(definition);
    const input = await this.definitions.input(state.workspaceId, { input: state.activation!.input ?? null, inputRef: state.activation!.inputRef }, signal);
    const pinned: PinnedRun = {
      definition,
      model: {
        provider: model.provider,
        model: model.model,
        scripted: model.scripted,
        contextWindow: model.entry.contextWindow,
        maxOutputTokens: model.entry.maxOutputTokens,
        structuredOutput: model.entry.capabilities.structuredOutput,
      },
      plan: (callId, name, args) => this.tools.plan(callId, name, args, mcp),
      mcp,
      task: taskMessage(input),
      stallTurns: this.options.stallTurns,
      compactAtRatio: this.options.compactAtRatio,
    };
    return { pinned, model };
  }
}
