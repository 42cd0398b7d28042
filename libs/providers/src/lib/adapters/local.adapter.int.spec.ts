import { FakeOllamaServer, FakeOpenAiServer, reply } from '../../testing';
import type { ChatMessage } from '../provider.types';
import { describeAdapterContract, requestFor, routerFor, WEATHER_TOOL } from './adapter-contract.testkit';
import { LocalOpenAiAdapter, localOpenAiBaseUrl } from './local-openai.adapter';
import { OllamaAdapter } from './ollama.adapter';

const bearer = (value: unknown) => (typeof value === 'string' ? value.replace(/^Bearer /, '') : undefined);

describe(LocalOpenAiAdapter.name, () => {
  describeAdapterContract({
    provider: 'local',
    model: 'qwen3-8b',
    createServer: () => new FakeOpenAiServer(),
    // The server root: the adapter adds /v1 itself.
    env: (server) => ({ PACKETAGENT_LOCAL_BASE_URL: server.url, PACKETAGENT_LOCAL_API: 'openai' }),
    keyOf: (request) => bearer(request.headers.authorization),
  });

  describe('wire format', () => {
    const server = new FakeOpenAiServer();
    beforeAll(() => server.start());
    afterAll(() => server.close());
    beforeEach(() => server.reset());

    it('sends no Authorization header when no local key is configured, and costs nothing', async () => {
      const { sut } = routerFor({ PACKETAGENT_LOCAL_BASE_URL: server.url }, null);
      const model = await sut.resolve({ provider: 'local', model: 'llama3.1:8b' });
      server.reply(reply.text('hi', { usage: { inputTokens: 5_000, outputTokens: 5_000 } }));

      const turn = await sut.complete(requestFor(model, { maxOutputTokens: 50 }));

      expect(server.requests[0]!.headers.authorization).toBeUndefined();
      expect(server.requests[0]!.body).toMatchObject({ model: 'llama3.1:8b', max_tokens: 50 });
      expect(turn.costUsd).toBe(0);
    });

    it('adds /v1 to a server root and keeps a versioned path as it is', () => {
      expect(localOpenAiBaseUrl('http://127.0.0.1:8000')).toBe('http://127.0.0.1:8000/v1');
      expect(localOpenAiBaseUrl('http://127.0.0.1:8000/')).toBe('http://127.0.0.1:8000/v1');
      expect(localOpenAiBaseUrl('http://127.0.0.1:1234/v1')).toBe('http://127.0.0.1:1234/v1');
    });
  });
});

describe(OllamaAdapter.name, () => {
  describeAdapterContract({
    provider: 'local',
    model: 'qwen3:8b',
    createServer: () => new FakeOllamaServer(),
    env: (server) => ({ PACKETAGENT_LOCAL_BASE_URL: server.url, PACKETAGENT_LOCAL_API: 'ollama' }),
    keyOf: (request) => bearer(request.headers.authorization),
  });

  describe('wire format', () => {
    const server = new FakeOllamaServer();
    let env: Record<string, string>;

    beforeAll(async () => {
      await server.start();
      env = { PACKETAGENT_LOCAL_BASE_URL: server.url, PACKETAGENT_LOCAL_API: 'ollama', PACKETAGENT_LOCAL_CONTEXT_WINDOW_TOKENS: '16384' };
    });
    afterAll(() => server.close());
    beforeEach(() => server.reset());

    it('sends /api/chat with options, tools and tool results named by tool, not streaming unless asked', async () => {
      const { sut } = routerFor(env, null);
      const model = await sut.resolve({ provider: 'local', model: 'qwen3:8b' });
      server.reply(reply.text('done'));
      const messages: ChatMessage[] = [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Oslo' }, rawArguments: '{"city":"Oslo"}' }] },
        { role: 'tool', results: [{ callId: 'call_1', name: 'get_weather', content: 'sunny', isError: false }] },
      ];

      await sut.complete(requestFor(model, { system: 'Be brief.', messages, tools: [WEATHER_TOOL], maxOutputTokens: 128 }));

      const received = server.requests[0]!;
      expect(received.headers.authorization).toBeUndefined();
      expect(received.body).toEqual({
        model: 'qwen3:8b',
        stream: false,
        options: { num_predict: 128, num_ctx: 16384 },
        tools: [{ type: 'function', function: { name: 'get_weather', description: WEATHER_TOOL.description, parameters: WEATHER_TOOL.parameters } }],
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Weather?' },
          { role: 'assistant', content: '', tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Oslo' } } }] },
          { role: 'tool', tool_name: 'get_weather', content: 'sunny' },
        ],
      });
    });

    it('keeps thinking out of the text, in the native message, and replays it verbatim', async () => {
      const { sut } = routerFor(env, null);
      const model = await sut.resolve({ provider: 'local', model: 'qwen3:8b' });
      server.reply(reply.text('Hi!', { reasoning: 'A greeting.' }), reply.text('Again.'));

      const first = await sut.complete(requestFor(model, { stream: true }));
      await sut.complete(
        requestFor(model, {
          messages: [
            { role: 'user', content: 'Say hello.' },
            { role: 'assistant', content: first.text, toolCalls: [], native: first.native },
            { role: 'user', content: 'More.' },
          ],
        }),
      );

      expect(first.text).toBe('Hi!');
      expect(first.native.payload).toEqual({ role: 'assistant', content: 'Hi!', thinking: 'A greeting.' });
      expect(server.requests[1]!.body).toMatchObject({ messages: [{ role: 'system' }, { role: 'user' }, first.native.payload, { role: 'user' }] });
    });

    it('passes an output schema as the format', async () => {
      const { sut } = routerFor(env, null);
      const model = await sut.resolve({ provider: 'local', model: 'qwen3:8b' });
      const schema = { type: 'object', properties: { ok: { type: 'boolean' } } };
      server.reply(reply.text('{"ok":true}'));

      await sut.complete(requestFor(model, { outputSchema: schema }));

      expect(server.requests[0]!.body).toMatchObject({ format: schema });
    });
  });
});
