import { FakeOpenAiServer, reply } from '../../testing';
import type { ChatMessage } from '../provider.types';
import { describeAdapterContract, requestFor, routerFor, TEST_KEY, WEATHER_TOOL } from './adapter-contract.testkit';
import { OpenAiAdapter } from './openai.adapter';

const bearer = (value: unknown) => (typeof value === 'string' ? value.replace(/^Bearer /, '') : undefined);

describe(OpenAiAdapter.name, () => {
  describeAdapterContract({
    provider: 'openai',
    model: 'gpt-5-mini',
    createServer: () => new FakeOpenAiServer(),
    env: (server) => ({ PACKETAGENT_OPENAI_BASE_URL: server.baseUrl }),
    keyOf: (request) => bearer(request.headers.authorization),
  });

  describe('wire format', () => {
    const server = new FakeOpenAiServer();
    let env: Record<string, string>;

    beforeAll(async () => {
      await server.start();
      env = { PACKETAGENT_OPENAI_BASE_URL: server.baseUrl };
    });
    afterAll(() => server.close());
    beforeEach(() => server.reset());

    it('sends the system prompt, tools, output limit and transcript as chat messages', async () => {
      const { sut } = routerFor(env);
      const model = await sut.resolve({ provider: 'openai', model: 'gpt-5-mini' });
      server.reply(reply.text('done'));
      const messages: ChatMessage[] = [
        { role: 'user', content: 'Weather in Oslo and Rome?' },
        {
          role: 'assistant',
          content: '',
          toolCalls: [
            { id: 'call_a', name: 'get_weather', arguments: { city: 'Oslo' }, rawArguments: '{"city":"Oslo"}' },
            { id: 'call_b', name: 'get_weather', arguments: null, rawArguments: '{"city":', malformed: 'arguments are not valid JSON' },
          ],
        },
        {
          role: 'tool',
          results: [
            { callId: 'call_a', name: 'get_weather', content: 'sunny', isError: false },
            { callId: 'call_b', name: 'get_weather', content: 'arguments were not JSON', isError: true },
          ],
        },
      ];

      await sut.complete(requestFor(model, { system: 'Be brief.', messages, tools: [WEATHER_TOOL], maxOutputTokens: 300 }));

      const received = server.requests[0]!;
      expect(received.headers.authorization).toBe(`Bearer ${TEST_KEY}`);
      expect(received.headers['openai-organization']).toBeUndefined();
      expect(received.headers['x-stainless-retry-count']).toBe('0');
      expect(received.body).toEqual({
        model: 'gpt-5-mini',
        max_completion_tokens: 300,
        tools: [{ type: 'function', function: { name: 'get_weather', description: WEATHER_TOOL.description, parameters: WEATHER_TOOL.parameters } }],
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Weather in Oslo and Rome?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
              // A call that could not be read goes back as an empty object, so the transcript stays valid.
              { id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '{}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_a', content: 'sunny' },
          { role: 'tool', tool_call_id: 'call_b', content: 'Error: arguments were not JSON' },
        ],
      });
    });

    it('replays the stored assistant message verbatim for the same model', async () => {
      const { sut } = routerFor(env);
      const model = await sut.resolve({ provider: 'openai', model: 'gpt-5-mini' });
      server.reply(reply.toolCalls([{ id: 'call_9', name: 'get_weather', arguments: '{"city":"Lima"}' }]), reply.text('Warm.'));
      const first = await sut.complete(requestFor(model, { tools: [WEATHER_TOOL] }));

      await sut.complete(
        requestFor(model, {
          tools: [WEATHER_TOOL],
          messages: [
            { role: 'user', content: 'Say hello.' },
            { role: 'assistant', content: first.text, toolCalls: first.toolCalls, native: first.native },
            { role: 'tool', results: [{ callId: 'call_9', name: 'get_weather', content: '25C', isError: false }] },
          ],
        }),
      );

      expect(first.native.payload).toEqual({
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lima"}' } }],
      });
      expect(server.requests[1]!.body).toMatchObject({ messages: [{ role: 'system' }, { role: 'user' }, first.native.payload, { role: 'tool', tool_call_id: 'call_9' }] });
    });

    it('streams with usage requested and stores the assembled message as native', async () => {
      const { sut } = routerFor(env);
      const model = await sut.resolve({ provider: 'openai', model: 'gpt-5-mini' });
      server.reply(reply.text('Partly cloudy.', { toolCalls: [{ id: 'call_s', name: 'get_weather', arguments: '{"city":"Quito"}' }] }));

      const turn = await sut.complete(requestFor(model, { tools: [WEATHER_TOOL], stream: true }));

      expect(server.requests[0]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
      expect(turn.native.payload).toEqual({
        role: 'assistant',
        content: 'Partly cloudy.',
        tool_calls: [{ id: 'call_s', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Quito"}' } }],
      });
    });

    it('asks for a JSON schema response format when an output schema is given', async () => {
      const { sut } = routerFor(env);
      const model = await sut.resolve({ provider: 'openai', model: 'gpt-5-mini' });
      const schema = { type: 'object', properties: { answer: { type: 'string' } } };
      server.reply(reply.text('{"answer":"yes"}'));

      await sut.complete(requestFor(model, { outputSchema: schema }));

      expect(server.requests[0]!.body).toMatchObject({ response_format: { type: 'json_schema', json_schema: { name: 'final_answer', schema, strict: false } } });
    });

    it('estimates usage when the server reports none, and says so', async () => {
      const { sut } = routerFor(env);
      const model = await sut.resolve({ provider: 'openai', model: 'gpt-5-mini' });
      server.reply(reply.text('12345678', { omitUsage: true }));

      const turn = await sut.complete(requestFor(model, { stream: true }));

      expect(turn.usageEstimated).toBe(true);
      expect(turn.usage.outputTokens).toBe(2);
      expect(turn.costUsd).toBeGreaterThan(0);
    });

    it('reads context_length_exceeded as its own error', async () => {
      const { sut } = routerFor(env);
      const model = await sut.resolve({ provider: 'openai', model: 'gpt-5-mini' });
      server.reply(reply.error(400, { message: "This model's maximum context length is 400000 tokens.", code: 'context_length_exceeded' }));

      await expect(sut.complete(requestFor(model))).rejects.toMatchObject({ code: 'provider_context_exceeded' });
    });

  });
});
