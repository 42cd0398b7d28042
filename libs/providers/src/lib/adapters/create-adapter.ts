import type { Clock } from '../clock';
import { envProviderKeys, type ProviderConfig, type ProviderKeys } from '../config';
import type { ProviderAdapter, ProviderName } from '../provider.types';
import { ScriptedAdapter, ScriptSource } from '../scripted';
import { AnthropicAdapter } from './anthropic.adapter';
import { GeminiAdapter } from './gemini.adapter';
import { LocalOpenAiAdapter } from './local-openai.adapter';
import { MiniMaxAdapter } from './minimax.adapter';
import { OllamaAdapter } from './ollama.adapter';
import { OpenAiAdapter } from './openai.adapter';
import { OpenRouterAdapter } from './openrouter.adapter';

export interface AdapterDependencies {
  /** Defaults to the environment (ANTHROPIC_API_KEY and the like). */
  keys?: ProviderKeys;
  /** Defaults to the scripts directory of the config. */
  scripts?: ScriptSource;
  /** Used by the scripted provider's delays. */
  clock?: Pick<Clock, 'sleep'>;
}

/** The adapter for one provider, configured from `config`. */
export function createAdapter(name: ProviderName, config: ProviderConfig, dependencies: AdapterDependencies = {}): ProviderAdapter {
  const keys = dependencies.keys ?? envProviderKeys();
  switch (name) {
    case 'anthropic':
      return new AnthropicAdapter(config, keys);
    case 'openai':
      return new OpenAiAdapter(config, keys);
    case 'gemini':
      return new GeminiAdapter(config, keys);
    case 'openrouter':
      return new OpenRouterAdapter(config, keys);
    case 'minimax':
      return new MiniMaxAdapter(config, keys);
    case 'local':
      return config.local.api === 'ollama' ? new OllamaAdapter(config, keys) : new LocalOpenAiAdapter(config, keys);
    case 'scripted':
      return new ScriptedAdapter(dependencies.scripts ?? new ScriptSource({ dir: config.scriptsDir }), dependencies.clock);
    default: {
      const unknown: never = name;
      throw new Error(`no adapter for provider ${String(unknown)}`);
    }
  }
}
