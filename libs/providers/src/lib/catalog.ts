import { z } from 'zod';
import { ValidationError } from '@packetagent/contracts';
import { ProviderError } from './errors';
import type { CatalogEntry, ModelCapabilities, ModelPricing, ProviderName } from './provider.types';

export type ModelPreset = 'default' | 'fast' | 'local';
/** Providers whose models are listed here (scripted entries come from their script). */
export type CatalogProvider = Exclude<ProviderName, 'scripted'>;

const FULL: ModelCapabilities = { tools: true, structuredOutput: true, streaming: true };
const NO_SCHEMA: ModelCapabilities = { tools: true, structuredOutput: false, streaming: true };

function entry(
  provider: CatalogProvider,
  model: string,
  contextWindow: number,
  maxOutputTokens: number,
  pricing: [input: number, output: number],
  capabilities: ModelCapabilities = FULL,
  longContextPricing?: CatalogEntry['longContextPricing'],
): CatalogEntry {
  return {
    provider,
    model,
    contextWindow,
    maxOutputTokens,
    capabilities,
    pricing: { inputPerMTokUsd: pricing[0], outputPerMTokUsd: pricing[1] },
    ...(longContextPricing ? { longContextPricing } : {}),
    origin: 'builtin',
  };
}

const GEMINI_PRO_LONG = { aboveInputTokens: 200_000, inputPerMTokUsd: 2.5, outputPerMTokUsd: 15 };

/**
 * The models we can price, from the providers' published list prices (USD per million tokens,
 * standard tier, no cache discounts). A model missing here is refused rather than run unpriced.
 */
export const MODEL_CATALOG: readonly CatalogEntry[] = Object.freeze([
  entry('anthropic', 'claude-opus-4-6', 200_000, 64_000, [5, 25]),
  entry('anthropic', 'claude-sonnet-4-6', 200_000, 64_000, [3, 15]),
  entry('anthropic', 'claude-opus-4-5', 200_000, 64_000, [5, 25]),
  entry('anthropic', 'claude-sonnet-4-5', 200_000, 64_000, [3, 15]),
  entry('anthropic', 'claude-haiku-4-5', 200_000, 64_000, [1, 5]),
  entry('anthropic', 'claude-opus-4-1', 200_000, 32_000, [15, 75]),

  entry('openai', 'gpt-5', 400_000, 128_000, [1.25, 10]),
  entry('openai', 'gpt-5-mini', 400_000, 128_000, [0.25, 2]),
  entry('openai', 'gpt-5-nano', 400_000, 128_000, [0.05, 0.4]),
  entry('openai', 'gpt-4.1', 1_047_576, 32_768, [2, 8]),
  entry('openai', 'gpt-4.1-mini', 1_047_576, 32_768, [0.4, 1.6]),
  entry('openai', 'gpt-4o', 128_000, 16_384, [2.5, 10]),
  entry('openai', 'gpt-4o-mini', 128_000, 16_384, [0.15, 0.6]),

  entry('gemini', 'gemini-2.5-pro', 1_048_576, 65_536, [1.25, 10], FULL, GEMINI_PRO_LONG),
  entry('gemini', 'gemini-2.5-flash', 1_048_576, 65_536, [0.3, 2.5]),
  entry('gemini', 'gemini-2.5-flash-lite', 1_048_576, 65_536, [0.1, 0.4]),

  // OpenRouter passes the upstream list price through; its own ids use dots in versions.
  entry('openrouter', 'anthropic/claude-sonnet-4.5', 200_000, 64_000, [3, 15], NO_SCHEMA),
  entry('openrouter', 'anthropic/claude-haiku-4.5', 200_000, 64_000, [1, 5], NO_SCHEMA),
  entry('openrouter', 'openai/gpt-5', 400_000, 128_000, [1.25, 10]),
  entry('openrouter', 'openai/gpt-5-mini', 400_000, 128_000, [0.25, 2]),
  entry('openrouter', 'google/gemini-2.5-pro', 1_048_576, 65_536, [1.25, 10], FULL, GEMINI_PRO_LONG),
  entry('openrouter', 'google/gemini-2.5-flash', 1_048_576, 65_536, [0.3, 2.5]),

  // MiniMax documents no schema-constrained response_format for its chat completions.
  entry('minimax', 'MiniMax-M2', 204_800, 131_072, [0.3, 1.2], NO_SCHEMA),
  entry('minimax', 'MiniMax-M2.1', 204_800, 131_072, [0.3, 1.2], NO_SCHEMA),
]);

/** Dated snapshot ids that bill as their alias. */
const ALIASES: Readonly<Record<string, string>> = {
  'claude-sonnet-4-5-20250929': 'claude-sonnet-4-5',
  'claude-haiku-4-5-20251001': 'claude-haiku-4-5',
  'claude-opus-4-5-20251101': 'claude-opus-4-5',
  'claude-opus-4-1-20250805': 'claude-opus-4-1',
  'gpt-5-2025-08-07': 'gpt-5',
  'gpt-5-mini-2025-08-07': 'gpt-5-mini',
  'gpt-5-nano-2025-08-07': 'gpt-5-nano',
  'gpt-4.1-2025-04-14': 'gpt-4.1',
  'gpt-4.1-mini-2025-04-14': 'gpt-4.1-mini',
  'gpt-4o-2024-11-20': 'gpt-4o',
  'gpt-4o-mini-2024-07-18': 'gpt-4o-mini',
};

/**
 * What each preset means per provider. `local` has no fixed model: it is whatever
 * PACKETAGENT_LOCAL_MODEL names. The scripted provider has none, so a preset never picks it.
 */
export const PRESET_MODELS: Readonly<Record<'default' | 'fast', Readonly<Partial<Record<CatalogProvider, string>>>>> = {
  default: {
    anthropic: 'claude-sonnet-4-6',
    openai: 'gpt-5',
    gemini: 'gemini-2.5-pro',
    openrouter: 'anthropic/claude-sonnet-4.5',
    minimax: 'MiniMax-M2',
  },
  fast: {
    anthropic: 'claude-haiku-4-5',
    openai: 'gpt-5-mini',
    gemini: 'gemini-2.5-flash',
    openrouter: 'google/gemini-2.5-flash',
    minimax: 'MiniMax-M2',
  },
};

/** Charged for a script that names no pricing, so budgets have something to count in a demo. */
export const DEFAULT_SCRIPTED_PRICING: ModelPricing = Object.freeze({ inputPerMTokUsd: 1, outputPerMTokUsd: 5 });

const PricingSchema = z.strictObject({
  inputPerMTokUsd: z.number().nonnegative().max(10_000),
  outputPerMTokUsd: z.number().nonnegative().max(10_000),
});

/**
 * One entry of PACKETAGENT_MODEL_CATALOG_EXTRA. Only providers that serve open-ended model
 * lists can be extended: a first-party model we have no price for stays refused.
 */
const ExtraEntrySchema = z
  .strictObject({
    provider: z.enum(['local', 'openrouter']),
    model: z.string().min(1).max(200),
    contextWindow: z.number().int().positive(),
    maxOutputTokens: z.number().int().positive(),
    pricing: PricingSchema.optional(),
    capabilities: z.strictObject({ tools: z.boolean(), structuredOutput: z.boolean(), streaming: z.boolean() }).partial().optional(),
  })
  .refine((value) => value.provider === 'local' || value.pricing !== undefined, { message: 'an openrouter model needs pricing', path: ['pricing'] });

export const CatalogExtraSchema = z.array(ExtraEntrySchema).max(1_000);

export function catalogEntriesFromExtra(extra: z.infer<typeof CatalogExtraSchema>): CatalogEntry[] {
  return extra.map((item) => ({
    provider: item.provider,
    model: item.model,
    contextWindow: item.contextWindow,
    maxOutputTokens: item.maxOutputTokens,
    capabilities: { ...FULL, ...item.capabilities },
    pricing: item.pricing ?? { inputPerMTokUsd: 0, outputPerMTokUsd: 0 },
    origin: 'extra',
  }));
}

export interface ModelCatalogOptions {
  /** Entries added by the operator (local and openrouter only), taking precedence over the table. */
  extra?: readonly CatalogEntry[];
  /** Limits given to a local model that no extra entry describes. */
  local?: { contextWindow: number; maxOutputTokens: number };
}

/** The one place that says what a model costs and can do. */
export class ModelCatalog {
  private readonly byKey = new Map<string, CatalogEntry>();
  private readonly local: { contextWindow: number; maxOutputTokens: number };

  constructor(options: ModelCatalogOptions = {}) {
    for (const item of MODEL_CATALOG) this.byKey.set(key(item.provider, item.model), item);
    (options.extra ?? []).forEach((item, index) => {
      if (item.provider !== 'local' && item.provider !== 'openrouter') {
        throw new ValidationError('invalid extra catalog entry', [{ path: `[${index}].provider`, message: `only local and openrouter models can be added, not ${item.provider}` }]);
      }
      this.byKey.set(key(item.provider, item.model), item);
    });
    this.local = options.local ?? { contextWindow: 32_768, maxOutputTokens: 8_192 };
  }

  entries(provider?: ProviderName): CatalogEntry[] {
    return [...this.byKey.values()].filter((item) => provider === undefined || item.provider === provider);
  }

  /** The entry for a model, or `model_not_in_catalog` naming the models that provider has. */
  lookup(provider: CatalogProvider, model: string): CatalogEntry {
    const found = this.byKey.get(key(provider, model)) ?? this.aliased(provider, model);
    if (found) return found;
    if (provider === 'local') {
      return {
        provider,
        model,
        contextWindow: this.local.contextWindow,
        maxOutputTokens: this.local.maxOutputTokens,
        capabilities: { ...FULL },
        pricing: { inputPerMTokUsd: 0, outputPerMTokUsd: 0 },
        origin: 'local',
      };
    }
    const known = this.entries(provider).map((item) => item.model);
    const extendable = provider === 'openrouter' ? '; add it with its price through PACKETAGENT_MODEL_CATALOG_EXTRA' : '';
    throw new ProviderError(
      'model_not_in_catalog',
      `${provider} model "${model}" is not in the catalog, so it cannot be priced (known ${provider} models: ${known.join(', ')})${extendable}`,
      { provider, model },
    );
  }

  /** The entry for a script: its own pricing or the scripted default, always labelled scripted. */
  scripted(name: string, pricing: ModelPricing = DEFAULT_SCRIPTED_PRICING, contextWindow = 1_000_000): CatalogEntry {
    return {
      provider: 'scripted',
      model: name,
      contextWindow,
      maxOutputTokens: 100_000,
      capabilities: { ...FULL },
      pricing: { ...pricing },
      origin: 'script',
    };
  }

  private aliased(provider: CatalogProvider, model: string): CatalogEntry | undefined {
    const alias = ALIASES[model];
    if (alias === undefined) return undefined;
    const base = this.byKey.get(key(provider, alias));
    return base ? { ...base, model } : undefined;
  }
}

function key(provider: ProviderName, model: string): string {
  return `${provider}\u0000${model}`;
}

/** Dollars for a call: each side's tokens at its per-million price (the long-context price past its threshold). */
export function priceUsage(entry: CatalogEntry, usage: { inputTokens: number; outputTokens: number }): number {
  const long = entry.longContextPricing;
  const pricing = long && usage.inputTokens > long.aboveInputTokens ? long : entry.pricing;
  return (usage.inputTokens * pricing.inputPerMTokUsd + usage.outputTokens * pricing.outputPerMTokUsd) / 1_000_000;
}
