import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventRegistry, ExecRequestSchema, registerSandboxEvents, type ExecRequest, type ExecResult } from '@packetagent/contracts';
import { PostgresEventStore, PostgresPayloadStore } from '@packetagent/eventstore';
import { createTestDatabase, type TestDatabase } from '@packetagent/testing';
import { BubblewrapDriver } from '../drivers/bubblewrap/bubblewrap-driver';
import { DriverSelection } from '../drivers/driver-selection';
import type { SandboxDriver } from '../drivers/sandbox-driver';
import { CheckedEgressFetcher } from '../exec/egress-fetch';
import { ExecRunner } from '../exec/exec-runner';
import { ExecStore } from '../exec/exec-store';
import { resolveSandboxOptions, type ResolvedSandboxOptions, type SandboxModuleOptions } from '../sandbox.options';

export const operator = { kind: 'user', id: 'operator@example.com' } as const;

export interface SandboxKit {
  db: TestDatabase;
  dataDir: string;
  options: ResolvedSandboxOptions;
  runner: ExecRunner;
  payloads: PostgresPayloadStore;
  store: ExecStore;
  /** Runs argv in a fresh exec (its own id) with the given fields. */
  exec(argv: string[], fields?: Partial<ExecRequest>): Promise<ExecResult>;
  close(): Promise<void>;
}

let counter = 0;

/** The sandbox's runner over real bubblewrap, a real Postgres and a data directory of its own. */
export async function sandboxKit(options: Partial<SandboxModuleOptions> = {}, drivers?: (resolved: ResolvedSandboxOptions) => SandboxDriver[]): Promise<SandboxKit> {
  const db = await createTestDatabase();
  const dataDir = await mkdtemp(join(tmpdir(), 'pa-sandbox-'));
  const resolved = resolveSandboxOptions({ dataDir, ...options });
  const payloads = new PostgresPayloadStore(db.pool, { maxBytes: 8 * 1024 * 1024 });
  const store = new ExecStore(db.pool, new PostgresEventStore(db.pool, { registry: registerSandboxEvents(new EventRegistry()) }));
  const selection = new DriverSelection(drivers ? drivers(resolved) : [new BubblewrapDriver({ scratchDir: resolved.scratchDir })], resolved.driver);
  const egress = new CheckedEgressFetcher({ allowPrivate: resolved.allowPrivate, maxBytes: 16 * 1024 * 1024, timeoutMs: 10_000 });
  const runner = new ExecRunner(selection, store, payloads, egress, { nc: null, prefix: '' }, resolved);
  return {
    db,
    dataDir,
    options: resolved,
    runner,
    payloads,
    store,
    exec(argv, fields = {}) {
      return runner.run(ExecRequestSchema.parse({ execId: `exec-${process.pid}-${++counter}`, workspaceId: 'ws_sandbox', argv, requestedBy: operator, ...fields }));
    },
    async close() {
      await runner.cancelAll();
      await db.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
