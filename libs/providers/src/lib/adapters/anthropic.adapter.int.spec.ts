import { FakeAnthropicServer, reply } from '../../testing';
import type { ChatMessage } from '../provider.types';
import { AnthropicAdapter } from './anthropic.adapter';
import { describeAdapterContract, requestFor, routerFor, TEST_KEY, WEATHER_TOOL } from './adapter-contract.testkit';

const bearer = (value: unknown) => (typeof value === 'string' ? value.replace(/^Bearer /, '') : undefined);

describe(AnthropicAdapter.name, () => {
  describeAdapterContract({
    provider: 'anthropic',
    model: 'claude-haiku-4-5',
    createServer: () => new FakeAnthropicServer(),
    env: (server) => ({ PACKETAGENT_ANTHROPIC_BASE_URL: server.baseUrl }),
    keyOf: (request) => bearer(request.headers.authorization),
  });

  describe('wire format', () => {
    const server = new FakeAnthropicServer();
    let env: Record<string, string>;

    beforeAll(async () => {
      await server.start();
      env = { PACKETAGENT_ANTHROPIC_BASE_URL: server.baseUrl };
    });
    afterAll(() => server.close());
    beforeEach(() => server.reset());

    it('sends model, limits, system, tools and the transcript as Messages API blocks', async () => {
      const { sut } = routerFor(env);
      const model = await sut.resolve({ provider: 'anthropic', model: 'claude-haiku-4-5' });
      server.reply(reply.text('done'));
      const messages: ChatMessage[] = [
        { role: 'user', content: 'Weather in Oslo?' },
        { role: 'assistant', content: 'Let me check.', toolCalls: [{ id: 'toolu_1', name: 'get_weather', arguments: { city: 'Oslo' }, rawArguments: '{"city":"Oslo"}' }] },
        { role: 'tool', results: [{ callId: 'toolu_1', name: 'get_weather', content: 'sunny', isError: false }] },
        { role: 'user', content: 'And tomorrow?' },
      ];

      await sut.complete(requestFor(model, { system: 'Be brief.', messages, tools: [WEATHER_TOOL], maxOutputTokens: 512 }));

      const received = server.requests[0]!;
      expect(received.headers.authorization).toBe(`Bearer ${TEST_KEY}`);
      expect(received.headers['anthropic-version']).toEqual(expect.any(String));
      expect(received.headers['x-stainless-retry-count']).toBe('0');
      expect(received.body).toEqual({
        model: 'claude-haiku-4-5',
        max_tokens: 512,
        system: 'Be brief.',
        tools: [{ name: 'get_weather', description: WEATHER_TOOL.description, input_schema: WEATHER_TOOL.parameters }],
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Weather in Oslo?' }] },
          { role: 'assistant', content: [{ type: 'text', text: 'Let me check.' }, { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' } }] },
          // The tool result and the next user message travel as one user turn.
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' },
              { type: 'text', text: 'And tomorrow?' },
            ],
          },
        ],
      });
    });

    it('replays a stored assistant turn verbatim, thinking signature included, for the same model', async () => {
      const { sut } = routerFor(env);
      const model = await sut.resolve({ provider: 'anthropic', model: 'claude-haiku-4-5' });
      server.reply(reply.toolCalls([{ id: 'toolu_7', name: 'get_weather', arguments: '{"city":"Bergen"}' }], { reasoning: 'The user wants Bergen.' }), reply.text('Rainy, as usual.'));
      const first = await sut.complete(requestFor(model, { tools: [WEATHER_TOOL] }));

      await sut.complete(
        requestFor(model, {
          tools: [WEATHER_TOOL],
          messages: [
            { role: 'user', content: 'Say hello.' },
            { role: 'assistant', content: first.text, toolCalls: first.toolCalls, native: first.native },
            { role: 'tool', results: [{ callId: 'toolu_7', name: 'get_weather', content: 'rain', isError: true }] },
          ],
        }),
      );

      expect(first.text).toBe('');
      expect(first.native.payload).toMatchObject({ role: 'assistant', content: [{ type: 'thinking', thinking: 'The user wants Bergen.', signature: expect.stringMatching(/^sig_/) }, { type: 'tool_use' }] });
      expect(server.requests[1]!.body).toMatchObject({
        messages: [
          { role: 'user' },
          first.native.payload,
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_7', content: 'rain', is_error: true }] },
        ],
      });
    });

    it('rebuilds the turn from neutral fields when the stored one is from another model', async () => {
      const { sut } = routerFor(env);
      const model = await sut.resolve({ provider: 'anthropic', model: 'claude-haiku-4-5' });
      server.reply(reply.text('ok'));

      await sut.complete(
        requestFor(model, {
          messages: [
            { role: 'user', content: 'hi' },
            { role: 'assistant', content: 'hello', toolCalls: [], native: { provider: 'anthropic', model: 'claude-opus-4-1', payload: { role: 'assistant', content: [{ type: 'text', text: 'STORED' }] } } },
            { role: 'user', content: 'again' },
          ],
        }),
      );

      expect(server.requests[0]!.body).toMatchObject({ messages: [{ role: 'user' }, { role: 'assistant', content: [{ type: 'text', text: 'hello' }] }, { role: 'user' }] });
    });

    it('keeps streamed thinking and its signature in the native turn, out of the text', async () => {
      const { sut } = routerFor(env);
      const model = await sut.resolve({ provider: 'anthropic', model: 'claude-haiku-4-5' });
      server.reply(reply.text('Answer.', { reasoning: 'Think first, then answer.' }));

      const turn = await sut.complete(requestFor(model, { stream: true }));

      expect(server.requests[0]!.body).toMatchObject({ stream: true });
      expect(turn.text).toBe('Answer.');
      expect(turn.native.payload).toEqual({
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Think first, then answer.', signature: expect.stringMatching(/^sig_/) },
          { type: 'text', text: 'Answer.', citations: null },
        ],
      });
    });

    it('marks streamed tool input that does not add up to JSON as malformed', async () => {
      const { sut } = routerFor(env);
      const model = await sut.resolve({ provider: 'anthropic', model: 'claude-haiku-4-5' });
      server.reply(reply.toolCalls([{ name: 'get_weather', arguments: '{"city": "Os' }]));

      const turn = await sut.complete(requestFor(model, { tools: [WEATHER_TOOL], stream: true }));

      expect(turn.toolCalls[0]).toMatchObject({ arguments: null, rawArguments: '{"city": "Os', malformed: expect.stringContaining('not valid JSON') });
      expect(turn.native.payload).toMatchObject({ content: [{ type: 'tool_use', input: {} }] });
    });

    it('asks for structured output through output_config when the model supports it', async () => {
      const { sut } = routerFor(env);
      const model = await sut.resolve({ provider: 'anthropic', model: 'claude-haiku-4-5' });
      const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
      server.reply(reply.text('{"answer":"42"}'));

      await sut.complete(requestFor(model, { outputSchema: schema }));

      expect(server.requests[0]!.body).toMatchObject({ output_config: { format: { type: 'json_schema', schema } } });
    });

    it('reads a context overflow as its own error', async () => {
      const { sut } = routerFor(env);
      const model = await sut.resolve({ provider: 'anthropic', model: 'claude-haiku-4-5' });
      server.reply(reply.error(400, { message: 'prompt is too long: 210000 tokens > 200000 maximum' }));

      await expect(sut.complete(requestFor(model))).rejects.toMatchObject({ code: 'provider_context_exceeded', retryable: false });
    });

    it('treats 529 overloaded as a retryable server error', async () => {
      const { sut, clock } = routerFor(env);
      const model = await sut.resolve({ provider: 'anthropic', model: 'claude-haiku-4-5' });
      server.reply(reply.error(529, { message: 'Overloaded' }), reply.text('fine now'));

      await expect(sut.complete(requestFor(model))).resolves.toMatchObject({ text: 'fine now', attempts: 2 });
      expect(clock.sleeps).toHaveLength(1);
    });
  });
});
