export {
  FakeProviderServer,
  reply,
  fragments,
  bodyField,
  argumentsValue,
  writeSse,
  DEFAULT_FAKE_USAGE,
  type RecordedRequest,
  type FakeReply,
  type FakeTurnReply,
  type FakeErrorReply,
  type FakeHangReply,
  type FakeDropReply,
  type FakeToolCall,
  type FakeUsage,
} from './fake-server';
export { FakeAnthropicServer } from './anthropic-fake';
export { FakeOpenAiServer } from './openai-fake';
export { FakeGeminiServer, geminiModelOf } from './gemini-fake';
export { FakeOllamaServer } from './ollama-fake';
export { RecordingClock } from './recording-clock';
