import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ValidationError, type ValidationIssue } from '@packetagent/contracts';
import { CatalogExtraSchema, catalogEntriesFromExtra, type CatalogProvider } from './catalog';
import { PROVIDER_NAMES, type CatalogEntry, type ProviderName } from './provider.types';

/**
 * Where a provider's API key comes from. The default reads the environment; the supervisor
 * plugs in one backed by the vault. Called for every model call, so a rotated key is picked up
 * without a restart.
 */
export type ProviderKeys = (provider: ProviderName) => Promise<string | undefined>;

/** The environment variables each provider's key is read from, in order of preference. */
export const API_KEY_VARIABLES: Readonly<Record<CatalogProvider, readonly string[]>> = {
  anthropic: ['ANTHROPIC_API_KEY'],
  openai: ['OPENAI_API_KEY'],
  gemini: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'],
  openrouter: ['OPENROUTER_API_KEY'],
  minimax: ['MINIMAX_API_KEY'],
  // Optional: most local servers take no key; vLLM started with --api-key needs one.
  local: ['PACKETAGENT_LOCAL_API_KEY'],
};

export function envProviderKeys(env: Readonly<Record<string, string | undefined>> = process.env): ProviderKeys {
  return async (provider) => {
    if (provider === 'scripted') return undefined;
    for (const name of API_KEY_VARIABLES[provider]) {
      const value = env[name]?.trim();
      if (value) return value;
    }
    return undefined;
  };
}

export interface RetryPolicy {
  /** Attempts per model call, the first one included. */
  maxAttempts: number;
  /** One attempt is abandoned (and counts as a timeout) after this long. */
  attemptTimeoutMs: number;
  /** First backoff; doubled per attempt, with jitter, up to maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A server asking for a longer wait than this gets no retry: the caller decides what to do. */
  maxRetryAfterMs: number;
}

export type LocalApi = 'openai' | 'ollama';

export interface ProviderConfig {
  /** Order in which presets look for a usable provider. Never contains `scripted`. */
  priority: CatalogProvider[];
  anthropic: { baseUrl?: string };
  openai: { baseUrl?: string };
  gemini: { baseUrl?: string };
  openrouter: { baseUrl: string; referer?: string; title?: string };
  minimax: { baseUrl: string };
  local: {
    baseUrl?: string;
    api: LocalApi;
    /** The model presets use on the local server; unset means presets skip local. */
    model?: string;
    contextWindow: number;
    maxOutputTokens: number;
  };
  scriptsDir?: string;
  catalogExtra: CatalogEntry[];
  retry: RetryPolicy;
}

export const DEFAULT_PROVIDER_PRIORITY: readonly CatalogProvider[] = ['anthropic', 'openai', 'gemini', 'openrouter', 'minimax', 'local'];

const url = z.url({ protocol: /^https?$/, error: 'an http(s) URL' });
const optionalUrl = url.optional();
const integer = (min: number, max: number, fallback: number) => z.coerce.number().int().min(min).max(max).default(fallback);
const blankAsUnset = (value: unknown) => (typeof value === 'string' && value.trim() === '' ? undefined : value);

/**
 * Provider settings. Keys are not here: they come through `ProviderKeys`, so this object can be
 * logged.
 *
 * | variable | default | meaning |
 * | --- | --- | --- |
 * | PACKETAGENT_PROVIDER_PRIORITY | anthropic,openai,gemini,openrouter,minimax,local | order presets try providers in |
 * | PACKETAGENT_ANTHROPIC_BASE_URL | SDK default (api.anthropic.com) | Anthropic endpoint |
 * | PACKETAGENT_OPENAI_BASE_URL | SDK default (api.openai.com/v1) | OpenAI endpoint |
 * | PACKETAGENT_GEMINI_BASE_URL | SDK default (generativelanguage.googleapis.com) | Gemini endpoint |
 * | PACKETAGENT_OPENROUTER_BASE_URL | https://openrouter.ai/api/v1 | OpenRouter endpoint |
 * | PACKETAGENT_OPENROUTER_REFERER | unset | HTTP-Referer sent to OpenRouter (app attribution) |
 * | PACKETAGENT_OPENROUTER_TITLE | PacketAgent | X-Title sent to OpenRouter |
 * | PACKETAGENT_MINIMAX_BASE_URL | https://api.minimax.io/v1 | MiniMax OpenAI-compatible endpoint |
 * | PACKETAGENT_LOCAL_BASE_URL | unset | local server root, e.g. http://127.0.0.1:11434 (`/v1` is added for the openai API) |
 * | PACKETAGENT_LOCAL_API | openai | `openai` (vLLM, LM Studio, llama.cpp server) or `ollama` (native /api/chat) |
 * | PACKETAGENT_LOCAL_MODEL | unset | model the presets use on the local server |
 * | PACKETAGENT_LOCAL_CONTEXT_WINDOW_TOKENS | 32768 | context window given to local models |
 * | PACKETAGENT_LOCAL_MAX_OUTPUT_TOKENS | 8192 | output cap given to local models |
 * | PACKETAGENT_SCRIPTS_DIR | unset | directory of `<name>.yaml` model scripts |
 * | PACKETAGENT_MODEL_CATALOG_EXTRA | unset | JSON array (inline, or a path to a file) of extra local/openrouter catalog entries |
 * | PACKETAGENT_PROVIDER_MAX_ATTEMPTS | 4 | attempts per model call |
 * | PACKETAGENT_PROVIDER_ATTEMPT_TIMEOUT_MS | 120000 | per-attempt timeout, milliseconds |
 * | PACKETAGENT_PROVIDER_BACKOFF_BASE_MS | 1000 | first retry delay, milliseconds |
 * | PACKETAGENT_PROVIDER_BACKOFF_MAX_MS | 30000 | longest computed retry delay, milliseconds |
 * | PACKETAGENT_PROVIDER_MAX_RETRY_AFTER_MS | 60000 | longest server-requested wait we honour, milliseconds |
 *
 * A catalog extra entry: `{"provider": "openrouter", "model": "meta-llama/llama-3.3-70b-instruct",
 * "contextWindow": 131072, "maxOutputTokens": 16384, "pricing": {"inputPerMTokUsd": 0.13,
 * "outputPerMTokUsd": 0.4}}`; `capabilities` (tools, structuredOutput, streaming) is optional, and
 * pricing may be left out for local models (free).
 */
const EnvSchema = z.object({
  PACKETAGENT_PROVIDER_PRIORITY: z.string().optional(),
  PACKETAGENT_ANTHROPIC_BASE_URL: z.preprocess(blankAsUnset, optionalUrl),
  PACKETAGENT_OPENAI_BASE_URL: z.preprocess(blankAsUnset, optionalUrl),
  PACKETAGENT_GEMINI_BASE_URL: z.preprocess(blankAsUnset, optionalUrl),
  PACKETAGENT_OPENROUTER_BASE_URL: z.preprocess(blankAsUnset, url.default('https://openrouter.ai/api/v1')),
  PACKETAGENT_OPENROUTER_REFERER: z.preprocess(blankAsUnset, optionalUrl),
  PACKETAGENT_OPENROUTER_TITLE: z.preprocess(blankAsUnset, z.string().max(200).default('PacketAgent')),
  PACKETAGENT_MINIMAX_BASE_URL: z.preprocess(blankAsUnset, url.default('https://api.minimax.io/v1')),
  PACKETAGENT_LOCAL_BASE_URL: z.preprocess(blankAsUnset, optionalUrl),
  PACKETAGENT_LOCAL_API: z.preprocess(blankAsUnset, z.enum(['openai', 'ollama']).default('openai')),
  PACKETAGENT_LOCAL_MODEL: z.preprocess(blankAsUnset, z.string().max(200).optional()),
  PACKETAGENT_LOCAL_CONTEXT_WINDOW_TOKENS: z.preprocess(blankAsUnset, integer(512, 100_000_000, 32_768)),
  PACKETAGENT_LOCAL_MAX_OUTPUT_TOKENS: z.preprocess(blankAsUnset, integer(16, 10_000_000, 8_192)),
  PACKETAGENT_SCRIPTS_DIR: z.preprocess(blankAsUnset, z.string().optional()),
  PACKETAGENT_MODEL_CATALOG_EXTRA: z.preprocess(blankAsUnset, z.string().optional()),
  PACKETAGENT_PROVIDER_MAX_ATTEMPTS: z.preprocess(blankAsUnset, integer(1, 20, 4)),
  PACKETAGENT_PROVIDER_ATTEMPT_TIMEOUT_MS: z.preprocess(blankAsUnset, integer(1, 3_600_000, 120_000)),
  PACKETAGENT_PROVIDER_BACKOFF_BASE_MS: z.preprocess(blankAsUnset, integer(0, 600_000, 1_000)),
  PACKETAGENT_PROVIDER_BACKOFF_MAX_MS: z.preprocess(blankAsUnset, integer(0, 3_600_000, 30_000)),
  PACKETAGENT_PROVIDER_MAX_RETRY_AFTER_MS: z.preprocess(blankAsUnset, integer(0, 86_400_000, 60_000)),
});

function parsePriority(text: string | undefined, issues: ValidationIssue[]): CatalogProvider[] {
  if (text === undefined || text.trim() === '') return [...DEFAULT_PROVIDER_PRIORITY];
  const names: CatalogProvider[] = [];
  for (const raw of text.split(',')) {
    const name = raw.trim();
    if (name === '') continue;
    if (name === 'scripted') {
      issues.push({ path: 'PACKETAGENT_PROVIDER_PRIORITY', message: 'scripted is never chosen by a preset; name it explicitly in a model spec' });
    } else if (!(PROVIDER_NAMES as readonly string[]).includes(name)) {
      issues.push({ path: 'PACKETAGENT_PROVIDER_PRIORITY', message: `unknown provider "${name}" (known: ${DEFAULT_PROVIDER_PRIORITY.join(', ')})` });
    } else if (!names.includes(name as CatalogProvider)) {
      names.push(name as CatalogProvider);
    }
  }
  if (names.length === 0 && issues.length === 0) issues.push({ path: 'PACKETAGENT_PROVIDER_PRIORITY', message: 'names no provider' });
  return names;
}

function parseCatalogExtra(value: string | undefined, issues: ValidationIssue[]): CatalogEntry[] {
  if (value === undefined) return [];
  const variable = 'PACKETAGENT_MODEL_CATALOG_EXTRA';
  const inline = value.trimStart().startsWith('[');
  let text = value;
  if (!inline) {
    try {
      text = readFileSync(value, 'utf8');
    } catch (error) {
      issues.push({ path: variable, message: `cannot read ${value}: ${(error as NodeJS.ErrnoException).code ?? 'read failed'}` });
      return [];
    }
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    issues.push({ path: variable, message: `${inline ? 'value' : value} is not valid JSON` });
    return [];
  }
  const parsed = CatalogExtraSchema.safeParse(json);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      issues.push({ path: `${variable}${issue.path.map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`)).join('')}`, message: issue.message });
    }
    return [];
  }
  return catalogEntriesFromExtra(parsed.data);
}

/** Reads provider settings from an environment (process.env by default), failing on any bad value. */
export function providerConfigFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): ProviderConfig {
  const issues: ValidationIssue[] = [];
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) issues.push({ path: issue.path.map(String).join('.'), message: issue.message });
    throw new ValidationError('invalid provider configuration', issues);
  }
  const e = parsed.data;
  const priority = parsePriority(e.PACKETAGENT_PROVIDER_PRIORITY, issues);
  const catalogExtra = parseCatalogExtra(e.PACKETAGENT_MODEL_CATALOG_EXTRA, issues);
  if (issues.length > 0) throw new ValidationError('invalid provider configuration', issues);
  return {
    priority,
    anthropic: { baseUrl: e.PACKETAGENT_ANTHROPIC_BASE_URL },
    openai: { baseUrl: e.PACKETAGENT_OPENAI_BASE_URL },
    gemini: { baseUrl: e.PACKETAGENT_GEMINI_BASE_URL },
    openrouter: { baseUrl: e.PACKETAGENT_OPENROUTER_BASE_URL, referer: e.PACKETAGENT_OPENROUTER_REFERER, title: e.PACKETAGENT_OPENROUTER_TITLE },
    minimax: { baseUrl: e.PACKETAGENT_MINIMAX_BASE_URL },
    local: {
      baseUrl: e.PACKETAGENT_LOCAL_BASE_URL,
      api: e.PACKETAGENT_LOCAL_API,
      model: e.PACKETAGENT_LOCAL_MODEL,
      contextWindow: e.PACKETAGENT_LOCAL_CONTEXT_WINDOW_TOKENS,
      maxOutputTokens: e.PACKETAGENT_LOCAL_MAX_OUTPUT_TOKENS,
    },
    scriptsDir: e.PACKETAGENT_SCRIPTS_DIR,
    catalogExtra,
    retry: {
      maxAttempts: e.PACKETAGENT_PROVIDER_MAX_ATTEMPTS,
      attemptTimeoutMs: e.PACKETAGENT_PROVIDER_ATTEMPT_TIMEOUT_MS,
      baseDelayMs: e.PACKETAGENT_PROVIDER_BACKOFF_BASE_MS,
      maxDelayMs: e.PACKETAGENT_PROVIDER_BACKOFF_MAX_MS,
      maxRetryAfterMs: e.PACKETAGENT_PROVIDER_MAX_RETRY_AFTER_MS,
    },
  };
}
