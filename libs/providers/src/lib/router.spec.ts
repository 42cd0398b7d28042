import { eventually } from '@packetagent/testing';
import { RecordingClock } from '../testing';
import { systemClock } from './clock';
import { providerConfigFromEnv, type ProviderKeys } from './config';
import { ProviderError } from './errors';
import type { AdapterTurn, CallOptions, ModelRequest, ProviderAdapter, ProviderName } from './provider.types';
import { ProviderRouter, type RetryEvent } from './router';
import { ScriptSource } from './scripted';

/** An adapter that answers from a list: a turn, or an error to throw. */
class StubAdapter implements ProviderAdapter {
  readonly requests: ModelRequest[] = [];
  readonly signals: (AbortSignal | undefined)[] = [];

  constructor(
    readonly name: ProviderName,
    private readonly outcomes: (AdapterTurn | Error)[],
  ) {}

  async complete(request: ModelRequest, options: CallOptions): Promise<AdapterTurn> {
    this.requests.push(request);
    this.signals.push(options.signal);
    const next = this.outcomes.shift();
    if (!next) throw new Error('stub has no outcome left');
    if (next instanceof Error) throw next;
    return next;
  }
}

function turnOf(text: string, usage = { inputTokens: 100, outputTokens: 50 }): AdapterTurn {
  return { text, toolCalls: [], stopReason: 'end_turn', usage, native: { provider: 'openai', model: 'gpt-5', payload: null } };
}

function keysFor(...providers: ProviderName[]): ProviderKeys {
  return async (provider) => (providers.includes(provider) ? `key-for-${provider}` : undefined);
}

const rateLimited = (retryAfterMs?: number) => new ProviderError('provider_rate_limited', 'openai gpt-5: rate limited', { provider: 'openai', model: 'gpt-5', status: 429, retryAfterMs });
const serverError = () => new ProviderError('provider_server_error', 'openai gpt-5: server error', { provider: 'openai', model: 'gpt-5', status: 503 });

describe(ProviderRouter.name, () => {
  describe('resolve', () => {
    it('picks the first provider in priority order that has a key', async () => {
      const sut = new ProviderRouter({ config: providerConfigFromEnv({}), keys: keysFor('openai', 'gemini') });

      await expect(sut.resolve({ preset: 'default' })).resolves.toMatchObject({ provider: 'openai', model: 'gpt-5', scripted: false });
      await expect(sut.resolve({ preset: 'fast' })).resolves.toMatchObject({ provider: 'openai', model: 'gpt-5-mini' });
    });

    it('follows PACKETAGENT_PROVIDER_PRIORITY', async () => {
      const sut = new ProviderRouter({ config: providerConfigFromEnv({ PACKETAGENT_PROVIDER_PRIORITY: 'gemini, openai' }), keys: keysFor('openai', 'gemini', 'anthropic') });

      await expect(sut.resolve({ preset: 'default' })).resolves.toMatchObject({ provider: 'gemini', model: 'gemini-2.5-pro' });
      await expect(sut.resolve({ preset: 'fast' })).resolves.toMatchObject({ provider: 'gemini', model: 'gemini-2.5-flash' });
    });

    it('falls back to a local server that has a model when no key is set', async () => {
      const config = providerConfigFromEnv({ PACKETAGENT_LOCAL_BASE_URL: 'http://127.0.0.1:11434', PACKETAGENT_LOCAL_MODEL: 'qwen3:8b', PACKETAGENT_LOCAL_CONTEXT_WINDOW_TOKENS: '65536' });
      const sut = new ProviderRouter({ config, keys: keysFor() });

      const resolved = await sut.resolve({ preset: 'default' });

      expect(resolved).toMatchObject({ provider: 'local', model: 'qwen3:8b', entry: { contextWindow: 65_536, pricing: { inputPerMTokUsd: 0, outputPerMTokUsd: 0 }, origin: 'local' } });
      await expect(sut.resolve({ preset: 'local' })).resolves.toMatchObject({ provider: 'local', model: 'qwen3:8b' });
    });

    it('resolves the local preset only to the local server, whatever keys exist', async () => {
      const sut = new ProviderRouter({ config: providerConfigFromEnv({}), keys: keysFor('anthropic') });

      const error = await sut.resolve({ preset: 'local' }).catch((e: unknown) => e);

      expect(error).toMatchObject({ code: 'provider_unavailable' });
      expect((error as Error).message).toContain('PACKETAGENT_LOCAL_BASE_URL with PACKETAGENT_LOCAL_MODEL');
    });

    it('never lets a preset pick the scripted provider, and names the variables to set', async () => {
      const scripts = new ScriptSource();
      scripts.register('demo', { turns: [{ text: 'hi' }] });
      const sut = new ProviderRouter({ config: providerConfigFromEnv({}), keys: keysFor('scripted'), scripts });

      const error = await sut.resolve({ preset: 'default' }).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(ProviderError);
      expect(error).toMatchObject({ code: 'provider_unavailable' });
      for (const name of ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'GEMINI_API_KEY or GOOGLE_API_KEY', 'OPENROUTER_API_KEY', 'MINIMAX_API_KEY', 'PACKETAGENT_LOCAL_BASE_URL']) {
        expect((error as Error).message).toContain(name);
      }
    });

    it('refuses a model the catalog cannot price, naming the models it knows', async () => {
      const sut = new ProviderRouter({ config: providerConfigFromEnv({}), keys: keysFor('anthropic') });

      const error = await sut.resolve({ provider: 'anthropic', model: 'claude-imaginary-9' }).catch((e: unknown) => e);

      expect(error).toMatchObject({ code: 'model_not_in_catalog', provider: 'anthropic', model: 'claude-imaginary-9' });
      expect((error as Error).message).toContain('claude-haiku-4-5');
      expect((error as Error).message).toContain('claude-sonnet-4-5');
    });

    it('accepts an OpenRouter model added through the catalog extra, at its given price', async () => {
      const extra = JSON.stringify([{ provider: 'openrouter', model: 'meta-llama/llama-3.3-70b-instruct', contextWindow: 131072, maxOutputTokens: 16384, pricing: { inputPerMTokUsd: 0.13, outputPerMTokUsd: 0.4 } }]);
      const sut = new ProviderRouter({ config: providerConfigFromEnv({ PACKETAGENT_MODEL_CATALOG_EXTRA: extra }), keys: keysFor('openrouter') });

      const resolved = await sut.resolve({ provider: 'openrouter', model: 'meta-llama/llama-3.3-70b-instruct' });

      expect(resolved.entry).toMatchObject({ origin: 'extra', pricing: { inputPerMTokUsd: 0.13, outputPerMTokUsd: 0.4 } });
      await expect(sut.resolve({ provider: 'openrouter', model: 'meta-llama/llama-4-unknown' })).rejects.toMatchObject({ code: 'model_not_in_catalog' });
    });

    it('refuses an explicit provider that has no key', async () => {
      const sut = new ProviderRouter({ config: providerConfigFromEnv({}), keys: keysFor() });

      await expect(sut.resolve({ provider: 'minimax', model: 'MiniMax-M2' })).rejects.toMatchObject({ code: 'provider_unavailable', message: expect.stringContaining('MINIMAX_API_KEY') });
    });

    it("caps a spec's output limit at the model's", async () => {
      const sut = new ProviderRouter({ config: providerConfigFromEnv({}), keys: keysFor('openai') });

      await expect(sut.resolve({ provider: 'openai', model: 'gpt-4o-mini', maxOutputTokens: 1_000_000 })).resolves.toMatchObject({ maxOutputTokens: 16_384 });
      await expect(sut.resolve({ provider: 'openai', model: 'gpt-4o-mini', maxOutputTokens: 500 })).resolves.toMatchObject({ maxOutputTokens: 500 });
    });

    it('resolves a dated snapshot id at its alias price', async () => {
      const sut = new ProviderRouter({ config: providerConfigFromEnv({}), keys: keysFor('anthropic') });

      await expect(sut.resolve({ provider: 'anthropic', model: 'claude-haiku-4-5-20251001' })).resolves.toMatchObject({
        model: 'claude-haiku-4-5-20251001',
        entry: { pricing: { inputPerMTokUsd: 1, outputPerMTokUsd: 5 } },
      });
    });
  });

  describe('presetChoice', () => {
    it('answers what a preset would resolve to with the keys the router has, without resolving it', async () => {
      const sut = new ProviderRouter({ config: providerConfigFromEnv({ PACKETAGENT_PROVIDER_PRIORITY: 'gemini,openai' }), keys: keysFor('openai') });

      await expect(sut.presetChoice('fast')).resolves.toEqual({ chosen: { provider: 'openai', model: 'gpt-5-mini' }, candidates: ['gemini', 'openai'] });
      await expect(sut.presetChoice('local')).resolves.toEqual({ chosen: null, candidates: ['local'] });
    });
  });

  describe('hasScripts', () => {
    it('is true with a scripts directory or a registered script, and false with neither', () => {
      const registered = new ScriptSource();
      registered.register('demo', { turns: [{ text: 'hi' }] });

      expect(new ProviderRouter({ config: providerConfigFromEnv({}), keys: keysFor() }).hasScripts()).toBe(false);
      expect(new ProviderRouter({ config: providerConfigFromEnv({ PACKETAGENT_SCRIPTS_DIR: '/srv/scripts' }), keys: keysFor() }).hasScripts()).toBe(true);
      expect(new ProviderRouter({ config: providerConfigFromEnv({}), keys: keysFor(), scripts: registered }).hasScripts()).toBe(true);
    });
  });

  describe('pricing', () => {
    const sut = new ProviderRouter({ config: providerConfigFromEnv({}), keys: keysFor('anthropic', 'gemini') });

    it('prices usage at the catalog price per million tokens', async () => {
      const model = await sut.resolve({ provider: 'anthropic', model: 'claude-sonnet-4-5' });

      expect(sut.costUsd(model, { inputTokens: 2_000_000, outputTokens: 100_000 })).toBeCloseTo(2 * 3 + 0.1 * 15, 10);
    });

    it('switches to the long-context price past its threshold', async () => {
      const model = await sut.resolve({ provider: 'gemini', model: 'gemini-2.5-pro' });

      expect(sut.costUsd(model, { inputTokens: 200_000, outputTokens: 1_000 })).toBeCloseTo((200_000 * 1.25 + 1_000 * 10) / 1e6, 12);
      expect(sut.costUsd(model, { inputTokens: 200_001, outputTokens: 1_000 })).toBeCloseTo((200_001 * 2.5 + 1_000 * 15) / 1e6, 12);
    });

    it('estimates input at four characters a token and output at the full allowance', async () => {
      const model = await sut.resolve({ provider: 'anthropic', model: 'claude-haiku-4-5' });
      const request: ModelRequest = { model, system: 'x'.repeat(400), messages: [{ role: 'user', content: 'y'.repeat(3_600) }], tools: [], maxOutputTokens: 1_000 };

      expect(sut.estimateCostUsd(request)).toBeCloseTo((1_000 * 1 + 1_000 * 5) / 1e6, 12);
    });

    it('counts a stored native turn at its larger size in the estimate', async () => {
      const model = await sut.resolve({ provider: 'anthropic', model: 'claude-haiku-4-5' });
      const base: ModelRequest = { model, system: '', messages: [], tools: [], maxOutputTokens: 0 };
      const withNative: ModelRequest = {
        ...base,
        messages: [{ role: 'assistant', content: 'ok', toolCalls: [], native: { provider: 'anthropic', model: 'claude-haiku-4-5', payload: { thinking: 'z'.repeat(4_000) } } }],
      };

      expect(sut.estimateCostUsd(withNative)).toBeGreaterThan(sut.estimateCostUsd({ ...base, messages: [{ role: 'assistant', content: 'ok', toolCalls: [] }] }));
    });
  });

  describe('complete', () => {
    async function routerWith(outcomes: (AdapterTurn | Error)[], env: Record<string, string> = {}, onRetry?: (event: RetryEvent) => void) {
      const clock = new RecordingClock();
      const stub = new StubAdapter('openai', outcomes);
      const sut = new ProviderRouter({ config: providerConfigFromEnv(env), keys: keysFor('openai'), adapters: { openai: stub }, clock, random: () => 0.5, onRetry });
      const model = await sut.resolve({ provider: 'openai', model: 'gpt-5' });
      return { sut, stub, clock, request: { model, system: '', messages: [{ role: 'user' as const, content: 'hi' }], tools: [], maxOutputTokens: 1_000 } };
    }

    it('backs off exponentially with jitter between retryable failures', async () => {
      const { sut, clock, request } = await routerWith([serverError(), serverError(), serverError(), turnOf('finally')]);

      const turn = await sut.complete(request);

      expect(turn).toMatchObject({ text: 'finally', attempts: 4, provider: 'openai', model: 'gpt-5' });
      // Equal jitter with a draw of 0.5: three quarters of 1 s, 2 s, 4 s.
      expect(clock.sleeps).toEqual([750, 1_500, 3_000]);
    });

    it("honours the server's retry-after and reports each retry", async () => {
      const events: RetryEvent[] = [];
      const { sut, clock, request } = await routerWith([rateLimited(7_000), turnOf('ok')], {}, (event) => events.push(event));

      await sut.complete(request);

      expect(clock.sleeps).toEqual([7_000]);
      expect(events).toEqual([expect.objectContaining({ provider: 'openai', model: 'gpt-5', attempt: 1, delayMs: 7_000, error: expect.objectContaining({ code: 'provider_rate_limited' }) })]);
    });

    it('gives up at once when the server asks for a longer wait than allowed', async () => {
      const { sut, stub, clock, request } = await routerWith([rateLimited(3_600_000), turnOf('never')]);

      await expect(sut.complete(request)).rejects.toMatchObject({ code: 'provider_rate_limited', retryAfterMs: 3_600_000 });
      expect(stub.requests).toHaveLength(1);
      expect(clock.sleeps).toEqual([]);
    });

    it('stops after the configured number of attempts with the last error', async () => {
      const { sut, stub, request } = await routerWith([serverError(), serverError(), rateLimited()], { PACKETAGENT_PROVIDER_MAX_ATTEMPTS: '3' });

      await expect(sut.complete(request)).rejects.toMatchObject({ code: 'provider_rate_limited' });
      expect(stub.requests).toHaveLength(3);
    });

    it('does not retry what cannot succeed on a retry', async () => {
      const refused = new ProviderError('provider_bad_request', 'openai gpt-5: request refused (HTTP 400)', { provider: 'openai', status: 400 });
      const { sut, stub, request } = await routerWith([refused, turnOf('never')]);

      await expect(sut.complete(request)).rejects.toBe(refused);
      expect(stub.requests).toHaveLength(1);
    });

    it('turns an unexpected adapter failure into a typed, non-retryable error', async () => {
      const { sut, stub, request } = await routerWith([new TypeError('boom'), turnOf('never')]);

      await expect(sut.complete(request)).rejects.toMatchObject({ code: 'provider_bad_response', retryable: false, message: expect.stringContaining('boom') });
      expect(stub.requests).toHaveLength(1);
    });

    it('caps the output limit at the model maximum and prices the turn', async () => {
      const { sut, stub, request } = await routerWith([turnOf('ok', { inputTokens: 1_000_000, outputTokens: 1_000_000 })]);

      const turn = await sut.complete({ ...request, maxOutputTokens: 10_000_000 });

      expect(stub.requests[0]!.maxOutputTokens).toBe(128_000);
      expect(turn.costUsd).toBeCloseTo(1.25 + 10, 10);
    });

    it('aborts during a backoff wait without another attempt', async () => {
      const stub = new StubAdapter('openai', [rateLimited(30_000), turnOf('never')]);
      const sut = new ProviderRouter({ config: providerConfigFromEnv({}), keys: keysFor('openai'), adapters: { openai: stub }, clock: systemClock });
      const model = await sut.resolve({ provider: 'openai', model: 'gpt-5' });
      const controller = new AbortController();
      const started = Date.now();

      const call = sut.complete({ model, system: '', messages: [], tools: [], maxOutputTokens: 10 }, { signal: controller.signal }).catch((e: unknown) => e);
      await eventually(() => stub.requests.length === 1, { what: 'the first attempt' });
      controller.abort();

      await expect(call).resolves.toMatchObject({ code: 'provider_aborted' });
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(stub.requests).toHaveLength(1);
    });

    it('does not start when the signal is already aborted', async () => {
      const { sut, stub, request } = await routerWith([turnOf('never')]);

      await expect(sut.complete(request, { signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'provider_aborted' });
      expect(stub.requests).toHaveLength(0);
    });

    it('refuses tools for a model that cannot call them', async () => {
      const stub = new StubAdapter('local', [turnOf('never')]);
      const extra = JSON.stringify([{ provider: 'local', model: 'tiny', contextWindow: 2048, maxOutputTokens: 256, capabilities: { tools: false } }]);
      const sut = new ProviderRouter({ config: providerConfigFromEnv({ PACKETAGENT_LOCAL_BASE_URL: 'http://127.0.0.1:1', PACKETAGENT_MODEL_CATALOG_EXTRA: extra }), adapters: { local: stub } });
      const model = await sut.resolve({ provider: 'local', model: 'tiny' });
      const tool = { name: 't', description: 'd', parameters: { type: 'object' } };

      await expect(sut.complete({ model, system: '', messages: [], tools: [tool], maxOutputTokens: 10 })).rejects.toMatchObject({ code: 'provider_bad_request' });
      expect(stub.requests).toHaveLength(0);
    });
  });
});
