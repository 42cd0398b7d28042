import { Inject, Injectable, Module, type DynamicModule, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Pool } from 'pg';
import { BUS_TOPOLOGY, CommandBus, EVENT_REGISTRY, NATS_CONNECTION, type Topology } from '@packetagent/bus';
import { registerSandboxEvents, type EventRegistry } from '@packetagent/contracts';
import { PayloadStore, PG_POOL, PostgresEventStore } from '@packetagent/eventstore';
import { browserOptions, BrowserSessions } from './browser';
import { BrowserRouting } from './browser/browser-routing';
import { ComputerCommandsHandler } from './computers/computer-commands.handler';
import { ComputerExecs } from './computers/computer-execs';
import { ComputerKeys } from './computers/computer-keys';
import { ComputerRegistry } from './computers/computer-registry';
import { ComputerStore } from './computers/computer-store';
import { ProbeLeader } from './computers/probe-leader';
import { BubblewrapDriver } from './drivers/bubblewrap/bubblewrap-driver';
import { DriverSelection } from './drivers/driver-selection';
import { DockerDriver } from './drivers/docker/docker-driver';
import { dockerOptionsFromHost } from './drivers/docker/docker-engine';
import { ReplicaLink } from './exec/replica-link';
import { CheckedEgressFetcher } from './exec/egress-fetch';
import { ExecRunner } from './exec/exec-runner';
import { ExecStore } from './exec/exec-store';
import { McpSessions } from './mcp';
import { RunHolders } from './replicas/run-holders';
import { McpRouting } from './mcp/mcp-routing';
import { McpCommandsHandler } from './mcp-commands.handler';
import { SandboxCommandsHandler } from './sandbox-commands.handler';
import { resolveSandboxOptions, SANDBOX_OPTIONS, type ResolvedSandboxOptions, type SandboxModuleOptions } from './sandbox.options';
import { BROWSER_HOLDERS, BROWSER_SESSIONS, COMPUTER_EXECS, COMPUTER_REGISTRY, DRIVER_SELECTION, EXEC_RUNNER, EXEC_STORE, MCP_HOLDERS, MCP_SESSIONS, PROBE_LEADER } from './sandbox.tokens';

/** Says at start which driver commands run in, or what to install; ends every command this replica runs when the app stops. */
@Injectable()
class SandboxLifecycle implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(
    @Inject(EXEC_RUNNER) private readonly runner: ExecRunner,
    @Inject(BROWSER_SESSIONS) private readonly browsers: BrowserSessions,
    @Inject(DRIVER_SELECTION) private readonly drivers: DriverSelection,
    @Inject(SANDBOX_OPTIONS) private readonly options: ResolvedSandboxOptions,
    @Inject(COMPUTER_REGISTRY) private readonly computers: ComputerRegistry,
    @Inject(COMPUTER_EXECS) private readonly computerExecs: ComputerExecs,
    @Inject(PROBE_LEADER) private readonly probes: ProbeLeader,
    @Inject(MCP_SESSIONS) private readonly mcp: McpSessions,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.computers.listen();
    this.probes.start();
    const reclaimed = await this.drivers.reclaim();
    if (reclaimed > 0) this.options.log('warn', `sandbox: ended ${reclaimed} command(s) a stopped sandbox process on this host left running`);
    try {
      const { driver, probe } = await this.drivers.current();
      this.options.log('info', `sandbox: commands run in ${driver.name} (${probe.detail})`, probe.unenforced.length ? { unenforced: probe.unenforced } : {});
    } catch (error) {
      this.options.log('warn', `sandbox: ${error instanceof Error ? error.message : String(error)}; run_command answers sandbox_unavailable until one is installed`);
    }
  }

  async onModuleDestroy(): Promise<void> {
    await this.probes.stop();
    await Promise.all([this.runner.cancelAll(), this.browsers.closeAll(), this.computers.close(), this.mcp.closeAll()]);
    this.computerExecs.closeAll();
  }
}

const SANDBOX_EVENT_SCHEMAS = Symbol('SANDBOX_EVENT_SCHEMAS');

/** Egress downloads: at most this many bytes per file, this long per request. */
const EGRESS_MAX_BYTES = 256 * 1024 * 1024;
const EGRESS_TIMEOUT_MS = 120_000;

/**
 * Commands in a sandbox (bubblewrap or Docker, no network, hard limits) and a browser per run.
 * Needs the global providers of BusModule and EventStoreModule (PG_POOL, PayloadStore).
 */
@Module({})
export class SandboxModule {
  static forRoot(options: SandboxModuleOptions): DynamicModule {
    const resolved = resolveSandboxOptions(options);
    return {
      module: SandboxModule,
      providers: [
        { provide: SANDBOX_OPTIONS, useValue: resolved },
        { provide: SANDBOX_EVENT_SCHEMAS, useFactory: (registry: EventRegistry) => registerSandboxEvents(registry), inject: [EVENT_REGISTRY] },
        { provide: EXEC_STORE, useFactory: (pool: Pool, events: PostgresEventStore) => new ExecStore(pool, events), inject: [PG_POOL, PostgresEventStore] },
        {
          provide: DRIVER_SELECTION,
          useFactory: (opts: ResolvedSandboxOptions) =>
            new DriverSelection(
              [
                new BubblewrapDriver({ scratchDir: opts.scratchDir, ...opts.bubblewrap }),
                new DockerDriver({ image: opts.docker.image, user: opts.docker.user, ...(opts.docker.host ? { docker: dockerOptionsFromHost(opts.docker.host) } : {}) }),
              ],
              opts.driver,
            ),
          inject: [SANDBOX_OPTIONS],
        },
        { provide: ComputerStore, useFactory: (pool: Pool, events: PostgresEventStore) => new ComputerStore(pool, events), inject: [PG_POOL, PostgresEventStore] },
        { provide: ComputerKeys, useFactory: (commands: CommandBus) => new ComputerKeys(commands), inject: [CommandBus] },
        {
          provide: COMPUTER_REGISTRY,
          useFactory: (store: ComputerStore, keys: ComputerKeys, selection: DriverSelection, nc: NatsConnection, topo: Topology, opts: ResolvedSandboxOptions) =>
            new ComputerRegistry(store, keys, selection, { nc, prefix: topo.prefix }, { staleAfterMs: opts.computers.staleAfterMs, timings: opts.computers, log: opts.log }),
          inject: [ComputerStore, ComputerKeys, DRIVER_SELECTION, NATS_CONNECTION, BUS_TOPOLOGY, SANDBOX_OPTIONS],
        },
        {
          provide: COMPUTER_EXECS,
          useFactory: (store: ComputerStore, registry: ComputerRegistry, keys: ComputerKeys, opts: ResolvedSandboxOptions) => new ComputerExecs(store, registry, keys, { timings: opts.computers, idleMs: opts.computers.idleMs }),
          inject: [ComputerStore, COMPUTER_REGISTRY, ComputerKeys, SANDBOX_OPTIONS],
        },
        {
          provide: PROBE_LEADER,
          useFactory: (pool: Pool, store: ComputerStore, registry: ComputerRegistry, opts: ResolvedSandboxOptions) => new ProbeLeader(pool, store, registry, { intervalMs: opts.computers.probeIntervalMs, log: opts.log }),
          inject: [PG_POOL, ComputerStore, COMPUTER_REGISTRY, SANDBOX_OPTIONS],
        },
        {
          provide: EXEC_RUNNER,
          useFactory: (selection: DriverSelection, store: ExecStore, payloads: PayloadStore, nc: NatsConnection, topo: Topology, opts: ResolvedSandboxOptions, computers: ComputerExecs) =>
            new ExecRunner(selection, store, payloads, new CheckedEgressFetcher({ allowPrivate: opts.allowPrivate, maxBytes: EGRESS_MAX_BYTES, timeoutMs: EGRESS_TIMEOUT_MS }), { nc, prefix: topo.prefix }, opts, computers),
          inject: [DRIVER_SELECTION, EXEC_STORE, PayloadStore, NATS_CONNECTION, BUS_TOPOLOGY, SANDBOX_OPTIONS, COMPUTER_EXECS],
        },
        {
          provide: BROWSER_SESSIONS,
          useFactory: (payloads: PayloadStore, opts: ResolvedSandboxOptions) => new BrowserSessions({ payloads, options: browserOptions({ chromiumPath: opts.chromiumPath, allowPrivate: opts.allowPrivate }) }),
          inject: [PayloadStore, SANDBOX_OPTIONS],
        },
        { provide: MCP_HOLDERS, useFactory: (pool: Pool, opts: ResolvedSandboxOptions) => new RunHolders(pool, 'sandbox.mcp_holders', opts.replicaId), inject: [PG_POOL, SANDBOX_OPTIONS] },
        { provide: BROWSER_HOLDERS, useFactory: (pool: Pool, opts: ResolvedSandboxOptions) => new RunHolders(pool, 'sandbox.browser_sessions', opts.replicaId), inject: [PG_POOL, SANDBOX_OPTIONS] },
        {
          provide: MCP_SESSIONS,
          useFactory: (selection: DriverSelection, payloads: PayloadStore, opts: ResolvedSandboxOptions, holders: RunHolders, computers: ComputerExecs) =>
            new McpSessions({ drivers: selection, options: opts, payloads, previewBytes: opts.previewBytes, computers }, opts, undefined, (run) => holders.release(run)),
          inject: [DRIVER_SELECTION, PayloadStore, SANDBOX_OPTIONS, MCP_HOLDERS, COMPUTER_EXECS],
        },
        BrowserRouting,
        McpRouting,
        ReplicaLink,
        SandboxCommandsHandler,
        ComputerCommandsHandler,
        McpCommandsHandler,
        SandboxLifecycle,
      ],
    };
  }
}
