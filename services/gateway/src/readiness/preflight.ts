import { Injectable } from '@nestjs/common';
import { CommandBus } from '@packetagent/bus';
import { ComputerCommands, SandboxCommands, SupervisorModelCommands, VaultCommands, type WorkerDefinition } from '@packetagent/contracts';

/** One thing the package needs that this server cannot give it now. */
export interface MissingRequirement {
  kind: 'credential' | 'provider' | 'tool' | 'computer';
  name: string;
  reason: string;
}

export interface Preflight {
  /** True when nothing is missing: a run of the package would find all it needs. */
  ready: boolean;
  missing: MissingRequirement[];
}

/**
 * What a package needs that the workspace or this server lacks: credentials not in the vault,
 * model providers the supervisor cannot reach, tools whose runtime is unavailable and computers
 * not registered. Reads only; a service that does not answer makes its items missing, with the
 * reason, rather than assumed present.
 */
@Injectable()
export class PackagePreflight {
  constructor(private readonly bus: CommandBus) {}

  async run(workspaceId: string, definition: WorkerDefinition, requires: { providers: string[]; credentials: string[]; tools: string[] }): Promise<Preflight> {
    const computers = [...new Set(definition.tools.flatMap((grant) => grant.computers ?? []))].sort();
    const [credentials, providers, tools, registered] = await Promise.all([
      this.credentials(workspaceId, requires.credentials),
      this.providers(workspaceId, requires.providers),
      this.tools(requires.tools),
      this.computers(workspaceId, computers),
    ]);
    const missing = [...credentials, ...providers, ...tools, ...registered];
    return { ready: missing.length === 0, missing };
  }

  private async credentials(workspaceId: string, names: string[]): Promise<MissingRequirement[]> {
    if (names.length === 0) return [];
    const stored = await this.ask(() => this.bus.request(VaultCommands.listCredentials, { workspaceId }));
    if (stored instanceof Error) return names.map((name) => ({ kind: 'credential', name, reason: unanswered('the vault', stored) }));
    const present = new Set(stored.items.map((item) => item.name));
    return names.filter((name) => !present.has(name)).map((name) => ({ kind: 'credential', name, reason: 'not stored in the workspace vault' }));
  }

  private async providers(workspaceId: string, names: string[]): Promise<MissingRequirement[]> {
    if (names.length === 0) return [];
    const answer = await this.ask(() => this.bus.request(SupervisorModelCommands.check, { workspaceId, providers: names }));
    if (answer instanceof Error) return names.map((name) => ({ kind: 'provider', name, reason: unanswered('no supervisor', answer) }));
    return answer.providers.filter((entry) => !entry.available).map((entry) => ({ kind: 'provider', name: entry.provider, reason: entry.reason ?? 'not available' }));
  }

  private async tools(names: string[]): Promise<MissingRequirement[]> {
    const needsSandbox = names.includes('run_command');
    const needsBrowser = names.includes('browser');
    if (!needsSandbox && !needsBrowser) return [];
    const status = await this.ask(() => this.bus.request(SandboxCommands.status, {}));
    if (status instanceof Error) return names.filter((name) => name === 'run_command' || name === 'browser').map((name) => ({ kind: 'tool', name, reason: unanswered('the sandbox', status) }));
    const missing: MissingRequirement[] = [];
    if (needsSandbox && status.driver === null) missing.push({ kind: 'tool', name: 'run_command', reason: 'no sandbox driver is available on this server' });
    if (needsBrowser && !status.browser.available) missing.push({ kind: 'tool', name: 'browser', reason: status.browser.detail });
    return missing;
  }

  private async computers(workspaceId: string, names: string[]): Promise<MissingRequirement[]> {
    if (names.length === 0) return [];
    const listed = await this.ask(() => this.bus.request(ComputerCommands.list, { workspaceId }));
    if (listed instanceof Error) return names.map((name) => ({ kind: 'computer', name, reason: unanswered('the sandbox', listed) }));
    const present = new Set(listed.items.map((item) => item.name));
    return names.filter((name) => !present.has(name)).map((name) => ({ kind: 'computer', name, reason: 'not registered in the workspace' }));
  }

  private async ask<T>(request: () => Promise<T>): Promise<T | Error> {
    try {
      return await request();
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    }
  }
}

function unanswered(who: string, error: Error): string {
  return `could not be checked: ${who} did not answer (${error.message})`;
}
