import { z } from 'zod';
import { DomainError } from '@packetagent/contracts';
import { createTestBus, type TestBus } from '@packetagent/testing';
import { topology, type Topology } from './topology';
import { Kvm } from '@nats-io/kv';
import { CommandBus, CommandTimeoutError, defineCommand, idempotencyEntry, NoHandlerError, RemoteCommandError } from './commands';

class BudgetExceededError extends DomainError {
  readonly code = 'budget_exceeded';
}

const reserve = defineCommand(
  'budget.reserve',
  z.object({ scope: z.string().min(1), amountUsd: z.number().positive() }),
  z.object({ reservationId: z.string() }),
);

describe(CommandBus.name, () => {
  let bus: TestBus;
  let topo: Topology;
  let server: CommandBus;
  let sut: CommandBus;
  let executions: number;

  beforeEach(async () => {
    bus = await createTestBus();
    topo = topology(bus.prefix);
    server = new CommandBus(bus.nc, topo);
    sut = new CommandBus(bus.nc, topo);
    executions = 0;
    server.handle(reserve, async (request) => {
      executions++;
      if (request.amountUsd > 100) throw new BudgetExceededError(`${request.scope} has no room for ${request.amountUsd} USD`);
      if (request.scope === 'explode') throw new Error('password=hunter2 leaked in a stack');
      return { reservationId: `r-${executions}` };
    });
    await bus.nc.flush();
  });
  afterEach(async () => {
    await server.drain();
    await bus.cleanup();
  });

  it('returns the typed result', async () => {
    await expect(sut.request(reserve, { scope: 'run:1', amountUsd: 1 })).resolves.toEqual({ reservationId: 'r-1' });
  });

  it('refuses an invalid request before it leaves, naming the path', async () => {
    await expect(sut.request(reserve, { scope: '', amountUsd: -1 })).rejects.toMatchObject({
      code: 'validation_failed',
      issues: [expect.objectContaining({ path: 'scope' }), expect.objectContaining({ path: 'amountUsd' })],
    });
    expect(executions).toBe(0);
  });

  it('carries a domain refusal back as a typed remote error', async () => {
    const error = await sut.request(reserve, { scope: 'run:1', amountUsd: 500 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RemoteCommandError);
    expect(error).toMatchObject({ code: 'budget_exceeded', retryable: false, message: 'run:1 has no room for 500 USD' });
  });

  it('hides the internals of an unexpected failure', async () => {
    const error = await sut.request(reserve, { scope: 'explode', amountUsd: 1 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'internal_error', retryable: true });
    expect(String((error as Error).message)).not.toContain('hunter2');
  });

  it('executes once per idempotency key, however often it is sent', async () => {
    const replies = await Promise.all([
      sut.request(reserve, { scope: 'run:1', amountUsd: 1 }, { idempotencyKey: 'k1' }),
      sut.request(reserve, { scope: 'run:1', amountUsd: 1 }, { idempotencyKey: 'k1' }).catch((e: unknown) => e),
    ]);
    const again = await sut.request(reserve, { scope: 'run:1', amountUsd: 1 }, { idempotencyKey: 'k1' });
    expect(executions).toBe(1);
    expect(again).toEqual({ reservationId: 'r-1' });
    // A concurrent repeat either gets the stored reply or a retryable "in progress" error.
    const second = replies[1] as { reservationId?: string; code?: string };
    expect(second.reservationId === 'r-1' || second.code === 'command_in_progress').toBe(true);
  });

  it('reports no handler and timeouts as distinct retryable errors', async () => {
    const unknown = defineCommand('nobody.listens', z.object({}), z.object({}));
    await expect(sut.request(unknown, {})).rejects.toBeInstanceOf(NoHandlerError);

    const slow = defineCommand('slow.thing', z.object({}), z.object({}));
    let finish!: () => void;
    server.handle(slow, () => new Promise((resolve) => (finish = () => resolve({}))));
    await bus.nc.flush();
    await expect(sut.request(slow, {}, { timeoutMs: 200 })).rejects.toBeInstanceOf(CommandTimeoutError);
    finish();
  });

  it('takes over a key whose handler died mid-command once the lease has passed', async () => {
    const leased = new CommandBus(bus.nc, topo, { inProgressLeaseMs: 50, queueGroup: 'leased' });
    const ran: string[] = [];
    const recover = defineCommand('budget.recover', z.object({}), z.object({ ok: z.boolean() }));
    leased.handle(recover, async () => {
      ran.push('again');
      return { ok: true };
    });
    await bus.nc.flush();
    const kv = await new Kvm(bus.nc).create(topo.commandResultsBucket, { history: 1 });
    await kv.put(idempotencyEntry('budget.recover', 'k-crashed'), `in_progress:${Date.now() - 1_000}`);

    await expect(sut.request(recover, {}, { idempotencyKey: 'k-crashed' })).resolves.toEqual({ ok: true });
    await expect(sut.request(recover, {}, { idempotencyKey: 'k-crashed' })).resolves.toEqual({ ok: true });
    expect(ran).toEqual(['again']);
    await leased.drain();
  });

  it('lets commands being handled reply before drain() returns', async () => {
    const slow = defineCommand('slow.drain', z.object({}), z.object({ done: z.boolean() }));
    let started!: () => void;
    const handling = new Promise<void>((resolve) => (started = resolve));
    let finish!: () => void;
    server.handle(slow, async () => {
      started();
      await new Promise<void>((resolve) => (finish = resolve));
      return { done: true };
    });
    await bus.nc.flush();
    const reply = sut.request(slow, {}, { timeoutMs: 5_000 });
    await handling;

    const draining = server.drain();
    finish();
    await draining;

    await expect(reply).resolves.toEqual({ done: true });
  });
});
