import { Test, type TestingModule } from '@nestjs/testing';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Pool } from 'pg';
import type { z } from 'zod';
import { BusModule, CommandBus, NATS_CONNECTION, type Topology } from '@packetagent/bus';
import {
  EventRegistry,
  IntakeCommands,
  registerIntakeEvents,
  registerSchedulerEvents,
  type ActivationResult,
  type IntakeEventData,
  type TriggerBinding,
} from '@packetagent/contracts';
import { EventStoreModule, PG_POOL, type NewEvent } from '@packetagent/eventstore';
import { testEnv, type TestDatabase } from '@packetagent/testing';
import { SchedulerEngine } from '../engine/scheduler-engine';
import { SchedulerModule } from '../scheduler.module';
import type { SchedulerModuleOptions } from '../scheduler.options';

export function schedulerTestRegistry(): EventRegistry {
  return registerSchedulerEvents(registerIntakeEvents(new EventRegistry()));
}

export interface Replica {
  name: string;
  app: TestingModule;
  engine: SchedulerEngine;
  pool: Pool;
  /** Ends the replica as a crash would: its NATS and Postgres connections die and never come back. */
  crash(): Promise<void>;
  close(): Promise<void>;
}

/**
 * One scheduler replica as a Nest app of its own, with its own NATS connection and Postgres
 * pool (every connection named after the replica, so a test can kill them).
 */
export async function startReplica(
  env: { db: TestDatabase; topo: Topology; registry: EventRegistry },
  name: string,
  options: SchedulerModuleOptions = {},
): Promise<Replica> {
  const applicationName = `pa-test-${name}`;
  const url = new URL(env.db.url);
  url.searchParams.set('application_name', applicationName);
  const app = await Test.createTestingModule({
    imports: [
      BusModule.forRoot({ natsUrl: testEnv.natsUrl, serviceName: name, topology: env.topo, registry: env.registry }),
      EventStoreModule.forRoot({ databaseUrl: url.toString(), poolSize: 6, registry: env.registry }),
      SchedulerModule.forRoot({ leaderRetryMs: 100, ...options }),
    ],
  }).compile();
  await app.init();
  const pool = app.get<Pool>(PG_POOL);
  const engine = app.get(SchedulerEngine);
  let crashed = false;
  return {
    name,
    app,
    engine,
    pool,
    crash: async () => {
      crashed = true;
      await app.get<NatsConnection>(NATS_CONNECTION).close();
      const ending = pool.end();
      await env.db.pool.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1`, [applicationName]);
      await ending;
    },
    // A crashed replica has nothing left to close but its loop, which only retries a dead pool.
    close: () => (crashed ? engine.stop() : app.close()),
  };
}

export type ActivateRequest = z.output<typeof IntakeCommands.activate.request>;

/**
 * Stands in for intake on the real bus: answers `intake.activate` as intake does (one run per
 * dedupe key; a repeat gets the same run, marked duplicate) and records every request.
 */
export class RecordingIntake {
  readonly requests: ActivateRequest[] = [];
  private readonly runs = new Map<string, ActivationResult>();
  private readonly bus: CommandBus;

  constructor(private readonly nc: NatsConnection, topo: Topology) {
    this.bus = new CommandBus(nc, topo);
  }

  async start(): Promise<void> {
    this.bus.handle(IntakeCommands.activate, async (request) => {
      this.requests.push(request);
      const known = this.runs.get(request.dedupeKey);
      if (known) return { ...known, duplicate: true };
      const result: ActivationResult = {
        runId: `run-${this.runs.size + 1}`,
        activationId: `act-${this.runs.size + 1}`,
        deploymentId: request.deploymentId ?? 'unknown',
        state: 'queued',
        hold: null,
        duplicate: false,
      };
      this.runs.set(request.dedupeKey, result);
      return result;
    });
    await this.nc.flush();
  }

  requestsFor(triggerId: string): ActivateRequest[] {
    return this.requests.filter((request) => request.triggerId === triggerId);
  }

  stop(): Promise<void> {
    return this.bus.drain();
  }
}

export function cronTrigger(triggerId: string, expression: string, missed: 'skip' | 'fire_once' = 'skip', timezone = 'UTC'): TriggerBinding {
  return { triggerId, key: `cron-${triggerId}`, kind: 'cron', cron: { expression, timezone, missed } };
}

const digest = 'a'.repeat(64);
const actor = { kind: 'user', id: 'u1' } as const;

export function deploymentCreated(deploymentId: string, triggers: TriggerBinding[], occurredAt?: Date): NewEvent {
  const data: IntakeEventData<'deployment.created'> = {
    deploymentId, workerId: 'w1', workerName: 'release-audit', version: 1, digest, effectiveDigest: digest,
    overrides: {}, maxConcurrentRuns: 1, triggers,
  };
  return { type: 'deployment.created', schemaVersion: 1, data, actor, occurredAt };
}

export function deploymentRolledBack(triggers: TriggerBinding[]): NewEvent {
  const data: IntakeEventData<'deployment.rolled_back'> = { fromVersion: 2, version: 1, digest, effectiveDigest: digest, maxConcurrentRuns: 1, triggers };
  return { type: 'deployment.rolled_back', schemaVersion: 1, data, actor };
}

export function deploymentPaused(): NewEvent {
  return { type: 'deployment.paused', schemaVersion: 1, data: { reason: 'maintenance' }, actor };
}

export function deploymentRevoked(): NewEvent {
  return { type: 'deployment.revoked', schemaVersion: 1, data: { reason: 'retired' }, actor };
}
