import { eventually } from '@packetagent/testing';
import type { FakeProviderServer, RecordedRequest } from '../../testing';
import { reply, RecordingClock } from '../../testing';
import type { CatalogProvider } from '../catalog';
import { providerConfigFromEnv, type ProviderConfig } from '../config';
import { ProviderError } from '../errors';
import type { ModelRequest, ResolvedModel, ToolSpec } from '../provider.types';
import { ProviderRouter } from '../router';

export const TEST_KEY = 'sk-test-contract-0123456789abcdef';

export const WEATHER_TOOL: ToolSpec = {
  name: 'get_weather',
  description: 'Current weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

export function requestFor(model: ResolvedModel, overrides: Partial<ModelRequest> = {}): ModelRequest {
  return { model, system: 'You are terse.', messages: [{ role: 'user', content: 'Say hello.' }], tools: [], maxOutputTokens: 256, ...overrides };
}

export interface RouterUnderTest {
  sut: ProviderRouter;
  clock: RecordingClock;
  config: ProviderConfig;
}

/** A router pointed at a fake by `env`, with recorded backoff and a fixed jitter draw; `key: null` means no key at all. */
export function routerFor(env: Record<string, string>, key: string | null = TEST_KEY): RouterUnderTest {
  const clock = new RecordingClock();
  const config = providerConfigFromEnv({ PACKETAGENT_PROVIDER_BACKOFF_BASE_MS: '1000', ...env });
  const sut = new ProviderRouter({ config, clock, random: () => 0, keys: async () => key ?? undefined });
  return { sut, clock, config };
}

export interface ContractSubject {
  provider: CatalogProvider;
  model: string;
  createServer(): FakeProviderServer;
  /** Environment that points the provider at the fake. */
  env(server: FakeProviderServer): Record<string, string>;
  /** The key as the fake received it. */
  keyOf(request: RecordedRequest): string | undefined;
}

/**
 * What every adapter must do, driven through the router and the real SDK against a fake that
 * speaks the provider's wire format: answers, tool calls, streaming, retries, timeouts,
 * malformed arguments, refused keys and aborts.
 */
export function describeAdapterContract(subject: ContractSubject): void {
  describe(`${subject.provider} contract`, () => {
    const server = subject.createServer();
    let env: Record<string, string>;

    beforeAll(async () => {
      await server.start();
      env = subject.env(server);
    });
    afterAll(() => server.close());
    beforeEach(() => server.reset());

    async function resolved(sut: ProviderRouter): Promise<ResolvedModel> {
      return sut.resolve({ provider: subject.provider, model: subject.model });
    }

    it('answers a text turn, priced from the usage the server reported', async () => {
      const { sut } = routerFor(env);
      server.reply(reply.text('Hello there.', { usage: { inputTokens: 1_000, outputTokens: 200 } }));
      const model = await resolved(sut);

      const turn = await sut.complete(requestFor(model));

      expect(turn).toMatchObject({ provider: subject.provider, model: subject.model, text: 'Hello there.', toolCalls: [], stopReason: 'end_turn', attempts: 1, scripted: false });
      expect(turn.usage).toEqual({ inputTokens: 1_000, outputTokens: 200 });
      expect(turn.costUsd).toBeCloseTo((1_000 * model.entry.pricing.inputPerMTokUsd + 200 * model.entry.pricing.outputPerMTokUsd) / 1e6, 12);
      expect(turn.native).toMatchObject({ provider: subject.provider, model: subject.model });
      expect(server.requests).toHaveLength(1);
      expect(subject.keyOf(server.requests[0]!)).toBe(TEST_KEY);
    });

    it('returns tool calls with their arguments parsed', async () => {
      const { sut } = routerFor(env);
      server.reply(reply.toolCalls([{ id: 'call_w1', name: 'get_weather', arguments: '{"city":"Oslo"}' }]));

      const turn = await sut.complete(requestFor(await resolved(sut), { tools: [WEATHER_TOOL] }));

      expect(turn.stopReason).toBe('tool_use');
      expect(turn.toolCalls).toEqual([expect.objectContaining({ name: 'get_weather', arguments: { city: 'Oslo' } })]);
      expect(turn.toolCalls[0]!.id).toEqual(expect.any(String));
      expect(turn.toolCalls[0]!.malformed).toBeUndefined();
    });

    it('assembles a streamed turn from its fragments, tool arguments included', async () => {
      const { sut } = routerFor(env);
      server.reply(
        reply.text('Checking the weather now.', {
          toolCalls: [
            { name: 'get_weather', arguments: '{"city":"Reykjavik"}' },
            { name: 'get_weather', arguments: '{"city":"Nuuk"}' },
          ],
          usage: { inputTokens: 40, outputTokens: 30 },
        }),
      );

      const turn = await sut.complete(requestFor(await resolved(sut), { tools: [WEATHER_TOOL], stream: true }));

      expect(turn.text).toBe('Checking the weather now.');
      expect(turn.toolCalls.map((call) => call.arguments)).toEqual([{ city: 'Reykjavik' }, { city: 'Nuuk' }]);
      expect(new Set(turn.toolCalls.map((call) => call.id)).size).toBe(2);
      expect(turn.stopReason).toBe('tool_use');
      expect(turn.usage).toEqual({ inputTokens: 40, outputTokens: 30 });
    });

    it("waits as long as a 429's retry hint says, then answers on the second attempt", async () => {
      const { sut, clock } = routerFor(env);
      server.reply(reply.error(429, { message: 'slow down', retryAfterSeconds: 2 }), reply.text('ok'));

      const turn = await sut.complete(requestFor(await resolved(sut)));

      expect(turn).toMatchObject({ text: 'ok', attempts: 2 });
      expect(clock.sleeps).toEqual([2_000]);
      expect(server.requests).toHaveLength(2);
    });

    it('retries a 500 with backoff, then answers', async () => {
      const { sut, clock } = routerFor(env);
      server.reply(reply.error(500, { message: 'upstream exploded' }), reply.text('recovered'));

      const turn = await sut.complete(requestFor(await resolved(sut)));

      expect(turn).toMatchObject({ text: 'recovered', attempts: 2 });
      // First backoff: half of the 1000 ms base plus a jitter draw of 0.
      expect(clock.sleeps).toEqual([500]);
    });

    it('retries a connection the server dropped without an answer', async () => {
      const { sut } = routerFor(env);
      server.reply(reply.drop(), reply.text('back'));

      const turn = await sut.complete(requestFor(await resolved(sut)));

      expect(turn).toMatchObject({ text: 'back', attempts: 2 });
      expect(server.requests).toHaveLength(2);
    });

    it('abandons an attempt the server holds, and fails as a timeout after the last attempt', async () => {
      const { sut } = routerFor({ ...env, PACKETAGENT_PROVIDER_ATTEMPT_TIMEOUT_MS: '150', PACKETAGENT_PROVIDER_MAX_ATTEMPTS: '2' });
      server.reply(reply.hang(), reply.hang());

      const error = await sut.complete(requestFor(await resolved(sut))).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(ProviderError);
      expect(error).toMatchObject({ code: 'provider_timeout', retryable: true, provider: subject.provider });
      expect(server.requests).toHaveLength(2);
      await eventually(() => server.requests.every((request) => request.clientClosed), { what: 'both held requests closed by the client' });
    });

    it('marks tool arguments that are not a JSON object instead of throwing', async () => {
      const { sut } = routerFor(env);
      server.reply(
        reply.toolCalls([
          { name: 'get_weather', arguments: '{"city": "Oslo"' },
          { name: 'get_weather', arguments: '["Oslo"]' },
        ]),
      );

      const turn = await sut.complete(requestFor(await resolved(sut), { tools: [WEATHER_TOOL] }));

      expect(turn.toolCalls).toHaveLength(2);
      expect(turn.toolCalls[0]).toMatchObject({ name: 'get_weather', arguments: null, malformed: expect.stringContaining('not valid JSON') });
      expect(turn.toolCalls[1]).toMatchObject({ arguments: null, malformed: 'arguments must be a JSON object, got an array' });
    });

    it('fails on a refused key at once, without retrying or repeating the key', async () => {
      const { sut, clock } = routerFor(env);
      server.reply(reply.error(401, { message: `Incorrect API key provided: ${TEST_KEY}` }));

      const error = await sut.complete(requestFor(await resolved(sut))).catch((e: unknown) => e);

      expect(error).toMatchObject({ code: 'provider_auth_failed', retryable: false, status: 401 });
      expect((error as Error).message).not.toContain(TEST_KEY);
      expect(JSON.stringify(error)).not.toContain(TEST_KEY);
      expect(server.requests).toHaveLength(1);
      expect(clock.sleeps).toEqual([]);
    });

    it('aborts a call in flight when the signal fires, without retrying', async () => {
      const { sut } = routerFor(env);
      server.reply(reply.hang());
      const controller = new AbortController();

      const call = sut.complete(requestFor(await resolved(sut)), { signal: controller.signal }).catch((e: unknown) => e);
      await eventually(() => server.requests.length === 1, { what: 'the request to reach the server' });
      controller.abort();

      await expect(call).resolves.toMatchObject({ code: 'provider_aborted', retryable: false });
      await eventually(() => server.requests[0]!.clientClosed, { what: 'the connection to be closed' });
      expect(server.requests).toHaveLength(1);
    });
  });
}
