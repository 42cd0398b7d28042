import type { ModelSpec } from '@packetagent/contracts';
import { createAdapter } from './adapters/create-adapter';
import { estimateTokens, requestChars } from './adapters/common';
import { ModelCatalog, priceUsage, type CatalogProvider, type ModelPreset } from './catalog';
import { systemClock, type Clock } from './clock';
import { API_KEY_VARIABLES, envProviderKeys, type ProviderConfig, type ProviderKeys } from './config';
import { abortedError, ProviderError } from './errors';
import { choosePresetModel, type PresetChoice } from './preset-choice';
import type { CallOptions, ModelRequest, ModelTurn, ProviderAdapter, ProviderName, ResolvedModel, Usage } from './provider.types';
import { ScriptSource } from './scripted';

export interface RetryEvent {
  provider: ProviderName;
  model: string;
  /** The attempt that failed (1 for the first). */
  attempt: number;
  /** How long the router waits before the next attempt. */
  delayMs: number;
  error: ProviderError;
}

export interface ProviderRouterOptions {
  config: ProviderConfig;
  /** Defaults to the environment. */
  keys?: ProviderKeys;
  /** Defaults to the config's scripts directory. */
  scripts?: ScriptSource;
  /** Adapters to use instead of the ones built from the config. */
  adapters?: Partial<Record<ProviderName, ProviderAdapter>>;
  /** Time and backoff waits; tests pass one that records the delays instead of waiting. */
  clock?: Clock;
  /** Jitter source in [0, 1). */
  random?: () => number;
  /** Called before each backoff wait, for logs and metrics. */
  onRetry?: (event: RetryEvent) => void;
}

/**
 * The one entry point for model calls: resolves a worker's model spec to a priced catalog
 * entry, runs the call on the provider's adapter with a per-attempt timeout, retries what is
 * retryable with backoff, and prices the turn from its usage.
 */
export class ProviderRouter {
  readonly catalog: ModelCatalog;
  private readonly config: ProviderConfig;
  private readonly keys: ProviderKeys;
  private readonly scripts: ScriptSource;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly adapters = new Map<ProviderName, ProviderAdapter>();

  constructor(private readonly options: ProviderRouterOptions) {
    this.config = options.config;
    this.keys = options.keys ?? envProviderKeys();
    this.scripts = options.scripts ?? new ScriptSource({ dir: options.config.scriptsDir });
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.catalog = new ModelCatalog({ extra: options.config.catalogExtra, local: options.config.local });
    for (const [name, adapter] of Object.entries(options.adapters ?? {})) this.adapters.set(name as ProviderName, adapter);
  }

  /**
   * The model a spec names. A preset takes the first provider in priority order that is set up
   * (a key, or for local a server and a model); an explicit provider must be set up too, and its
   * model must be in the catalog. The scripted provider is only ever chosen explicitly.
   */
  async resolve(spec: ModelSpec): Promise<ResolvedModel> {
    if ('preset' in spec) return this.resolvePreset(spec.preset);
    const { provider, model } = spec;
    if (provider === 'scripted') {
      const script = await this.scripts.load(model);
      const entry = this.catalog.scripted(model, script.pricing, script.contextWindow);
      return { provider, model, entry, scripted: true, ...capped(spec.maxOutputTokens, entry.maxOutputTokens) };
    }
    const entry = this.catalog.lookup(provider, model);
    if (!(await this.isSetUp(provider))) throw this.notSetUp(provider, model);
    return { provider, model: entry.model, entry, scripted: false, ...capped(spec.maxOutputTokens, entry.maxOutputTokens) };
  }

  /** Whether a provider can take calls now: it has a key, or (local) a server URL. */
  async isSetUp(provider: CatalogProvider): Promise<boolean> {
    if (provider === 'local') return Boolean(this.config.local.baseUrl);
    return Boolean((await this.keys(provider))?.trim());
  }

  /** The provider and model a preset would use now, with the keys and settings this router has. */
  presetChoice(preset: ModelPreset): Promise<PresetChoice> {
    return choosePresetModel(preset, this.config, (provider) => this.isSetUp(provider));
  }

  /** Whether the scripted provider has anywhere to find scripts: a scripts directory, or a registered script. */
  hasScripts(): boolean {
    return this.scripts.configured;
  }

  /** Dollars a turn cost, from its usage and the catalog price. */
  costUsd(model: ResolvedModel, usage: Usage): number {
    return priceUsage(model.entry, usage);
  }

  /**
   * An upper-bound-ish price for reserving budget before the call: input estimated at about four
   * characters a token, and the whole output allowance at the output price.
   */
  estimateCostUsd(request: ModelRequest): number {
    const inputTokens = estimateTokens(requestChars(request, true));
    const outputTokens = Math.min(request.maxOutputTokens, request.model.entry.maxOutputTokens);
    return priceUsage(request.model.entry, { inputTokens, outputTokens });
  }

  async complete(request: ModelRequest, options: CallOptions = {}): Promise<ModelTurn> {
    const { provider, model, entry } = request.model;
    const { signal } = options;
    const adapter = this.adapterFor(provider);
    const retry = this.config.retry;
    const call: ModelRequest = {
      ...request,
      maxOutputTokens: Math.min(request.maxOutputTokens, entry.maxOutputTokens),
      stream: request.stream === true && entry.capabilities.streaming,
    };
    if (call.tools.length > 0 && !entry.capabilities.tools) {
      throw new ProviderError('provider_bad_request', `${provider} ${model} cannot call tools, and this turn offers ${call.tools.length}`, { provider, model });
    }
    const started = this.clock.now();
    for (let attempt = 1; ; attempt++) {
      if (signal?.aborted) throw abortedError(provider, model, signal.reason);
      try {
        const turn = await this.attempt(adapter, call, signal);
        return {
          ...turn,
          provider,
          model,
          scripted: request.model.scripted,
          costUsd: this.costUsd(request.model, turn.usage),
          attempts: attempt,
          durationMs: Math.max(0, this.clock.now() - started),
        };
      } catch (error) {
        const failure = error instanceof ProviderError ? error : new ProviderError('provider_bad_response', `${provider} ${model}: ${error instanceof Error ? error.message : 'unknown failure'}`, { provider, model, cause: error });
        if (!failure.retryable || attempt >= retry.maxAttempts) throw failure;
        // A server that asks for a long pause is telling us the quota is gone: the caller decides.
        if (failure.retryAfterMs !== undefined && failure.retryAfterMs > retry.maxRetryAfterMs) throw failure;
        const delayMs = this.backoffMs(attempt, failure);
        this.options.onRetry?.({ provider, model, attempt, delayMs, error: failure });
        try {
          await this.clock.sleep(delayMs, signal);
        } catch (sleepError) {
          throw abortedError(provider, model, sleepError);
        }
      }
    }
  }

  /** One attempt, abandoned as a timeout when it outlives the per-attempt limit. */
  private async attempt(adapter: ProviderAdapter, request: ModelRequest, signal: AbortSignal | undefined) {
    const { provider, model } = request.model;
    const timeoutMs = this.config.retry.attemptTimeoutMs;
    const controller = new AbortController();
    const forward = () => controller.abort(signal?.reason);
    signal?.addEventListener('abort', forward, { once: true });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    try {
      return await adapter.complete(request, { signal: controller.signal });
    } catch (error) {
      if (signal?.aborted) throw abortedError(provider, model, error);
      if (timedOut) throw new ProviderError('provider_timeout', `${provider} ${model}: no answer within ${timeoutMs} ms`, { provider, model, cause: error });
      throw error;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', forward);
    }
  }

  /** The server's own wait when it gave one; otherwise exponential with equal jitter. */
  private backoffMs(attempt: number, failure: ProviderError): number {
    if (failure.retryAfterMs !== undefined) return failure.retryAfterMs;
    const { baseDelayMs, maxDelayMs } = this.config.retry;
    const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));
    return Math.round(ceiling / 2 + (this.random() * ceiling) / 2);
  }

  private adapterFor(provider: ProviderName): ProviderAdapter {
    let adapter = this.adapters.get(provider);
    if (!adapter) {
      adapter = createAdapter(provider, this.config, { keys: this.keys, scripts: this.scripts, clock: this.clock });
      this.adapters.set(provider, adapter);
    }
    return adapter;
  }

  private async resolvePreset(preset: ModelPreset): Promise<ResolvedModel> {
    const { chosen, candidates } = await this.presetChoice(preset);
    if (!chosen) throw new ProviderError('provider_unavailable', unavailableMessage(preset, candidates));
    const entry = this.catalog.lookup(chosen.provider, chosen.model);
    return { provider: chosen.provider, model: entry.model, entry, scripted: false };
  }

  private notSetUp(provider: CatalogProvider, model: string): ProviderError {
    const what = provider === 'local' ? 'set PACKETAGENT_LOCAL_BASE_URL' : `set ${API_KEY_VARIABLES[provider].join(' or ')} (or store the key in the vault)`;
    return new ProviderError('provider_unavailable', `${provider} is not set up: ${what}`, { provider, model });
  }
}

function capped(requested: number | undefined, limit: number): { maxOutputTokens?: number } {
  return requested === undefined ? {} : { maxOutputTokens: Math.min(requested, limit) };
}

function unavailableMessage(preset: ModelPreset, providers: readonly CatalogProvider[]): string {
  const ways = providers.map((provider) => (provider === 'local' ? 'PACKETAGENT_LOCAL_BASE_URL with PACKETAGENT_LOCAL_MODEL' : API_KEY_VARIABLES[provider].join(' or ')));
  const order = preset === 'local' ? '' : ` (providers tried in order: ${providers.join(', ')}; see PACKETAGENT_PROVIDER_PRIORITY)`;
  return `no model provider is available for the "${preset}" preset: set ${ways.join(', or ')}${order}`;
}
