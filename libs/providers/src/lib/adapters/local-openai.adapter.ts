import type { ProviderConfig, ProviderKeys } from '../config';
import { ProviderError } from '../errors';
import { ChatCompletionsAdapter } from './chat-completions';

/** The local server's OpenAI-compatible root: `/v1` is added unless the URL already names a version. */
export function localOpenAiBaseUrl(baseUrl: string): string {
  const trimmed = baseUrl.replace(/\/+$/, '');
  return /\/v\d+$/.test(trimmed) ? trimmed : `${trimmed}/v1`;
}

export function requireLocalBaseUrl(config: Pick<ProviderConfig, 'local'>): string {
  if (config.local.baseUrl) return config.local.baseUrl;
  throw new ProviderError('provider_unavailable', 'local has no server: set PACKETAGENT_LOCAL_BASE_URL (e.g. http://127.0.0.1:11434)', { provider: 'local' });
}

/** A local OpenAI-compatible server (vLLM, LM Studio, llama.cpp server, Ollama's /v1). */
export class LocalOpenAiAdapter extends ChatCompletionsAdapter {
  constructor(config: Pick<ProviderConfig, 'local'>, keys: ProviderKeys) {
    // Reasoning models served locally often write <think> blocks into the content.
    super({ provider: 'local', baseUrl: localOpenAiBaseUrl(requireLocalBaseUrl(config)), maxTokensField: 'max_tokens', stripThinkTags: true }, keys);
  }
}
