import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventRegistry, ExecRequestSchema, registerSandboxEvents, type ExecRequest, type ExecResult } from '@packetagent/contracts';
import { PostgresEventStore, PostgresPayloadStore } from '@packetagent/eventstore';
import { createTestDatabase, SshdProcess, type TestDatabase } from '@packetagent/testing';
import { BubblewrapDriver } from '../../drivers/bubblewrap/bubblewrap-driver';
import { DriverSelection } from '../../drivers/driver-selection';
import { CheckedEgressFetcher } from '../../exec/egress-fetch';
import { ExecRunner } from '../../exec/exec-runner';
import { ExecStore } from '../../exec/exec-store';
import { resolveSandboxOptions, type ComputerOptions } from '../../sandbox.options';
import { ComputerExecs } from '../computer-execs';
import type { ComputerKeys } from '../computer-keys';
import { ComputerRegistry } from '../computer-registry';
import { ComputerStore } from '../computer-store';

export const operator = { kind: 'user', id: 'operator@example.com' } as const;
export const ws = 'ws_computers';

export interface ComputerKit {
  db: TestDatabase;
  sshd: SshdProcess;
  events: PostgresEventStore;
  store: ComputerStore;
  registry: ComputerRegistry;
  runner: ExecRunner;
  execs: ComputerExecs;
  /** Where run workspaces are (`<runsDir>/<runId>/workspace`). */
  runsDir: string;
  /** How many key reads the registry and the runner made. */
  keyReads: { probe: number; redeem: number };
  /** Runs argv on the computer `name` as a run's call would (a key grant is redeemed for it). */
  exec(name: string, argv: string[], fields?: Partial<ExecRequest>): Promise<ExecResult>;
  close(): Promise<void>;
}

let counter = 0;

/**
 * The registry and the runner over a real sshd and a real Postgres. The key source stands in for
 * policy and the vault (which grant and seal the key in the deployed path, tested end to end in
 * services/all-in-one): it hands out the sshd's client key under the credential name `build_key`.
 */
export async function computerKit(computers: Partial<ComputerOptions> = {}): Promise<ComputerKit> {
  const db = await createTestDatabase();
  const sshd = await SshdProcess.create();
  await sshd.start();
  const key = await sshd.privateKey();
  const dataDir = await mkdtemp(join(tmpdir(), 'pa-computers-'));
  const options = resolveSandboxOptions({ dataDir, computers: { connectTimeoutMs: 5_000, keepaliveMs: 1_000, staleAfterMs: 2_000, ...computers } });
  const events = new PostgresEventStore(db.pool, { registry: registerSandboxEvents(new EventRegistry()) });
  const store = new ComputerStore(db.pool, events);
  const keyReads = { probe: 0, redeem: 0 };
  const keys = {
    forProbe: async () => {
      keyReads.probe++;
      return key;
    },
    redeem: async () => {
      keyReads.redeem++;
      return { credential: 'build_key', value: key };
    },
  } as unknown as ComputerKeys;
  const drivers = new DriverSelection([new BubblewrapDriver({ scratchDir: options.scratchDir })], 'auto');
  const registry = new ComputerRegistry(store, keys, drivers, { nc: null, prefix: '' }, { staleAfterMs: options.computers.staleAfterMs, timings: options.computers, log: () => undefined });
  const execs = new ComputerExecs(store, registry, keys, { timings: options.computers, idleMs: options.computers.idleMs });
  const execStore = new ExecStore(db.pool, events);
  const runner = new ExecRunner(drivers, execStore, new PostgresPayloadStore(db.pool, { maxBytes: 8 * 1024 * 1024 }), new CheckedEgressFetcher({ allowPrivate: [], maxBytes: 1024, timeoutMs: 1_000 }), { nc: null, prefix: '' }, options, execs);
  return {
    db,
    sshd,
    events,
    store,
    registry,
    runner,
    execs,
    runsDir: options.runsDir,
    keyReads,
    exec(name, argv, fields = {}) {
      return runner.run(
        ExecRequestSchema.parse({
          execId: `run-computers:call-${process.pid}-${++counter}`,
          workspaceId: ws,
          runId: 'run-computers',
          argv,
          computer: { name, keyGrant: 'a-grant' },
          requestedBy: { kind: 'service', id: 'supervisor' },
          ...fields,
        }),
      );
    },
    async close() {
      await runner.cancelAll();
      execs.closeAll();
      await sshd.dispose();
      await db.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
