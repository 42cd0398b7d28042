import { Inject, Injectable } from '@nestjs/common';
import { OnCommand } from '@packetagent/bus';
import { SandboxCommands, type BrowserActResult, type ExecRecord, type ExecResult, type ExecSummary, type ParsedExecRequest, type SandboxStatus } from '@packetagent/contracts';
import type { BrowserSessions, ParsedBrowserActRequest } from './browser';
import { BrowserRouting } from './browser/browser-routing';
import type { DriverSelection } from './drivers/driver-selection';
import { ReplicaLink } from './exec/replica-link';
import { ExecNotFoundError } from './exec/exec-not-found.error';
import type { ExecRunner } from './exec/exec-runner';
import type { ExecStore } from './exec/exec-store';
import { SANDBOX_OPTIONS, type ResolvedSandboxOptions } from './sandbox.options';
import { BROWSER_SESSIONS, DRIVER_SELECTION, EXEC_RUNNER, EXEC_STORE } from './sandbox.tokens';

/** `sandbox.*` over NATS request/reply, served by every replica. */
@Injectable()
export class SandboxCommandsHandler {
  constructor(
    @Inject(EXEC_RUNNER) private readonly runner: ExecRunner,
    @Inject(EXEC_STORE) private readonly store: ExecStore,
    @Inject(DRIVER_SELECTION) private readonly drivers: DriverSelection,
    @Inject(SANDBOX_OPTIONS) private readonly options: ResolvedSandboxOptions,
    @Inject(BROWSER_SESSIONS) private readonly browsers: BrowserSessions,
    private readonly replicas: ReplicaLink,
    private readonly browserRouting: BrowserRouting,
  ) {}

  @OnCommand(SandboxCommands.exec)
  async exec(request: ParsedExecRequest): Promise<ExecResult> {
    // A repeat of an exec whose replica died gets that ending instead of waiting on it.
    const earlier = await this.store.get(request.workspaceId, request.execId);
    return this.runner.run(request, earlier?.state === 'running' ? await this.replicas.settle(earlier) : earlier);
  }

  @OnCommand(SandboxCommands.cancel)
  async cancel(request: { workspaceId: string; execId: string }): Promise<{ found: boolean }> {
    return { found: await this.replicas.cancel(request.workspaceId, request.execId) };
  }

  @OnCommand(SandboxCommands.get)
  async get(request: { workspaceId: string; execId: string }): Promise<ExecRecord> {
    const record = await this.store.get(request.workspaceId, request.execId);
    if (!record) throw new ExecNotFoundError(request.execId);
    return this.replicas.settle(record);
  }

  @OnCommand(SandboxCommands.list)
  async list(request: { workspaceId: string; runId?: string; limit: number }): Promise<{ items: ExecSummary[] }> {
    return { items: await this.store.list(request.workspaceId, request) };
  }

  @OnCommand(SandboxCommands.status)
  async status(): Promise<SandboxStatus> {
    const probes = await this.drivers.all();
    const current = await this.drivers.current().then(
      (found) => found.driver.name,
      () => null,
    );
    const browser = await this.browsers.availability();
    return {
      driver: current,
      drivers: probes.map(({ driver, probe }) => ({ name: driver.name, ...probe })),
      defaults: this.options.defaults,
      maximum: this.options.maximum,
      envAllowlist: this.options.envAllowlist,
      egressOrigins: this.options.egressOrigins,
      browser,
    };
  }

  @OnCommand(SandboxCommands.browserAct)
  browserAct(request: ParsedBrowserActRequest): Promise<BrowserActResult> {
    return this.browserRouting.act(request);
  }

  @OnCommand(SandboxCommands.browserClose)
  browserClose(request: { workspaceId: string; runId: string }): Promise<{ closed: boolean }> {
    return this.browserRouting.close(request);
  }
}
