import type { ProviderConfig, ProviderKeys } from '../config';
import { ChatCompletionsAdapter } from './chat-completions';

const DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/** OpenAI Chat Completions. */
export class OpenAiAdapter extends ChatCompletionsAdapter {
  constructor(config: Pick<ProviderConfig, 'openai'>, keys: ProviderKeys) {
    // Reasoning models refuse `max_tokens`; `max_completion_tokens` works for every current model.
    super({ provider: 'openai', baseUrl: config.openai.baseUrl ?? DEFAULT_BASE_URL, maxTokensField: 'max_completion_tokens' }, keys);
  }
}
