import type { ProviderConfig, ProviderKeys } from '../config';
import { ChatCompletionsAdapter } from './chat-completions';

/**
 * OpenRouter's OpenAI-compatible endpoint. HTTP-Referer and X-Title are its documented
 * attribution headers; reasoning fields it returns are kept in the native turn, as its docs ask
 * for when a conversation goes on.
 */
export class OpenRouterAdapter extends ChatCompletionsAdapter {
  constructor(config: Pick<ProviderConfig, 'openrouter'>, keys: ProviderKeys) {
    const headers: Record<string, string> = {};
    if (config.openrouter.referer) headers['HTTP-Referer'] = config.openrouter.referer;
    if (config.openrouter.title) headers['X-Title'] = config.openrouter.title;
    super({ provider: 'openrouter', baseUrl: config.openrouter.baseUrl, headers, maxTokensField: 'max_tokens' }, keys);
  }
}
