import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { CallAuthorization, McpCatalogue, PlannedCall, ToolOutcome, ToolRegistry } from '@packetagent/tools';
import type { EffectsPort } from '../ports';

/** The built-in tools, each call in the run's own working directory (created once per drive). */
export class RegistryEffects implements EffectsPort {
  private workDirReady: Promise<unknown> | null = null;
  private readonly workDir: string;

  constructor(
    private readonly registry: ToolRegistry,
    private readonly run: { runId: string; workspaceId: string; browserUrls?: readonly string[]; mcp?: McpCatalogue },
    dataDir: string,
  ) {
    this.workDir = join(dataDir, 'runs', run.runId, 'workspace');
  }

  async execute(planned: PlannedCall, authorization: CallAuthorization, call: { idempotencyKey: string; credentials: Record<string, string>; computerGrant?: string; signal: AbortSignal }): Promise<ToolOutcome> {
    this.workDirReady ??= mkdir(this.workDir, { recursive: true });
    await this.workDirReady;
    return this.registry.execute(planned, authorization, { workspaceId: this.run.workspaceId, runId: this.run.runId, workDir: this.workDir, browserUrls: this.run.browserUrls ?? [], ...(this.run.mcp ? { mcp: this.run.mcp } : {}), ...call });
  }

  abandon(planned: PlannedCall, idempotencyKey: string): Promise<void> {
    return this.registry.abandon(planned, { workspaceId: this.run.workspaceId, runId: this.run.runId, idempotencyKey });
  }
}
