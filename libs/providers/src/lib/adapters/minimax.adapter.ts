import type { ProviderConfig, ProviderKeys } from '../config';
import { ChatCompletionsAdapter } from './chat-completions';

/**
 * MiniMax's OpenAI-compatible endpoint. `reasoning_split` moves the model's thinking out of the
 * content into `reasoning_details`; MiniMax asks for the whole assistant message to be sent back
 * in later turns, which the native replay does. `max_tokens` is deprecated there.
 */
export class MiniMaxAdapter extends ChatCompletionsAdapter {
  constructor(config: Pick<ProviderConfig, 'minimax'>, keys: ProviderKeys) {
    super(
      {
        provider: 'minimax',
        baseUrl: config.minimax.baseUrl,
        maxTokensField: 'max_completion_tokens',
        extraBody: { reasoning_split: true },
        stripThinkTags: true,
      },
      keys,
    );
  }
}
