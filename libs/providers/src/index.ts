export * from './lib/provider.types';
export * from './lib/errors';
export * from './lib/catalog';
export * from './lib/config';
export * from './lib/clock';
export * from './lib/router';
export * from './lib/scripted';
export { parseToolArguments } from './lib/tool-arguments';
export { createAdapter, type AdapterDependencies } from './lib/adapters/create-adapter';
export { AnthropicAdapter } from './lib/adapters/anthropic.adapter';
export { ChatCompletionsAdapter, type ChatCompletionsFlavour, type ChatCompletionsProvider } from './lib/adapters/chat-completions';
export { OpenAiAdapter } from './lib/adapters/openai.adapter';
export { OpenRouterAdapter } from './lib/adapters/openrouter.adapter';
export { MiniMaxAdapter } from './lib/adapters/minimax.adapter';
export { LocalOpenAiAdapter } from './lib/adapters/local-openai.adapter';
export { OllamaAdapter } from './lib/adapters/ollama.adapter';
export { GeminiAdapter } from './lib/adapters/gemini.adapter';
/** Local fake provider servers speaking each wire format, for tests in any project. */
export * as ProviderFakes from './testing';
