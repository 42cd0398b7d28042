import { FakeGeminiServer, geminiModelOf, reply } from '../../testing';
import type { ChatMessage } from '../provider.types';
import { describeAdapterContract, requestFor, routerFor, TEST_KEY, WEATHER_TOOL } from './adapter-contract.testkit';
import { GeminiAdapter } from './gemini.adapter';

describe(GeminiAdapter.name, () => {
  describeAdapterContract({
    provider: 'gemini',
    model: 'gemini-2.5-flash',
    createServer: () => new FakeGeminiServer(),
    env: (server) => ({ PACKETAGENT_GEMINI_BASE_URL: server.baseUrl }),
    keyOf: (request) => request.headers['x-goog-api-key'] as string | undefined,
  });

  describe('wire format', () => {
    const server = new FakeGeminiServer();
    let env: Record<string, string>;

    beforeAll(async () => {
      await server.start();
      env = { PACKETAGENT_GEMINI_BASE_URL: server.baseUrl };
    });
    afterAll(() => server.close());
    beforeEach(() => server.reset());

    it('sends contents, system instruction, function declarations and the output limit', async () => {
      const { sut } = routerFor(env);
      const model = await sut.resolve({ provider: 'gemini', model: 'gemini-2.5-flash' });
      server.reply(reply.text('done'));
      const messages: ChatMessage[] = [
        { role: 'user', content: 'Weather in Oslo?' },
        { role: 'assistant', content: 'Checking.', toolCalls: [{ id: 'fc_1', name: 'get_weather', arguments: { city: 'Oslo' }, rawArguments: '{"city":"Oslo"}' }] },
        { role: 'tool', results: [{ callId: 'fc_1', name: 'get_weather', content: 'no data', isError: true }] },
        { role: 'user', content: 'Guess then.' },
      ];

      await sut.complete(requestFor(model, { system: 'Be brief.', messages, tools: [WEATHER_TOOL], maxOutputTokens: 200 }));

      const received = server.requests[0]!;
      expect(geminiModelOf(received)).toBe('gemini-2.5-flash');
      expect(received.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
      expect(received.headers['x-goog-api-key']).toBe(TEST_KEY);
      expect(received.body).toEqual({
        systemInstruction: { role: 'user', parts: [{ text: 'Be brief.' }] },
        generationConfig: { maxOutputTokens: 200 },
        tools: [{ functionDeclarations: [{ name: 'get_weather', description: WEATHER_TOOL.description, parametersJsonSchema: WEATHER_TOOL.parameters }] }],
        contents: [
          { role: 'user', parts: [{ text: 'Weather in Oslo?' }] },
          { role: 'model', parts: [{ text: 'Checking.' }, { functionCall: { id: 'fc_1', name: 'get_weather', args: { city: 'Oslo' } } }] },
          // The function response and the next user text are one user turn.
          { role: 'user', parts: [{ functionResponse: { id: 'fc_1', name: 'get_weather', response: { error: 'no data' } } }, { text: 'Guess then.' }] },
        ],
      });
    });

    it('streams over SSE from streamGenerateContent', async () => {
      const { sut } = routerFor(env);
      const model = await sut.resolve({ provider: 'gemini', model: 'gemini-2.5-flash' });
      server.reply(reply.text('A streamed answer in pieces.'));

      const turn = await sut.complete(requestFor(model, { stream: true }));

      expect(server.requests[0]!.path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent');
      expect(server.requests[0]!.query).toMatchObject({ alt: 'sse' });
      expect(turn.text).toBe('A streamed answer in pieces.');
      // Consecutive text chunks are stored as one part.
      expect(turn.native.payload).toEqual({ role: 'model', parts: [{ text: 'A streamed answer in pieces.' }] });
    });

    it('keeps thoughts out of the text and replays the thought signature verbatim, without ids it minted', async () => {
      const { sut } = routerFor(env);
      const model = await sut.resolve({ provider: 'gemini', model: 'gemini-2.5-flash' });
      server.reply(reply.toolCalls([{ name: 'get_weather', arguments: '{"city":"Turin"}' }], { reasoning: 'Need the weather tool.' }), reply.text('Foggy.'));

      const first = await sut.complete(requestFor(model, { tools: [WEATHER_TOOL] }));
      const call = first.toolCalls[0]!;
      await sut.complete(
        requestFor(model, {
          tools: [WEATHER_TOOL],
          messages: [
            { role: 'user', content: 'Say hello.' },
            { role: 'assistant', content: first.text, toolCalls: first.toolCalls, native: first.native },
            { role: 'tool', results: [{ callId: call.id, name: 'get_weather', content: 'fog', isError: false }] },
          ],
        }),
      );

      expect(first.text).toBe('');
      expect(call).toMatchObject({ name: 'get_weather', arguments: { city: 'Turin' } });
      expect(first.native.payload).toEqual({
        role: 'model',
        parts: [{ text: 'Need the weather tool.', thought: true }, { functionCall: { name: 'get_weather', args: { city: 'Turin' } }, thoughtSignature: expect.any(String) }],
      });
      expect(server.requests[1]!.body).toMatchObject({
        contents: [{ role: 'user' }, first.native.payload, { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: 'fog' } } }] }],
      });
      const response = (server.requests[1]!.body as { contents: { parts: { functionResponse?: object }[] }[] }).contents[2]!.parts[0]!.functionResponse;
      expect(response).not.toHaveProperty('id');
    });

    it('asks for a JSON response only on a turn without tools', async () => {
      const { sut } = routerFor(env);
      const model = await sut.resolve({ provider: 'gemini', model: 'gemini-2.5-flash' });
      const schema = { type: 'object', properties: { answer: { type: 'string' } } };
      server.reply(reply.text('{"answer":"a"}'), reply.text('x'));

      await sut.complete(requestFor(model, { outputSchema: schema }));
      await sut.complete(requestFor(model, { outputSchema: schema, tools: [WEATHER_TOOL] }));

      expect(server.requests[0]!.body).toMatchObject({ generationConfig: { responseMimeType: 'application/json', responseJsonSchema: schema } });
      expect(server.requests[1]!.body).not.toHaveProperty('generationConfig.responseMimeType');
    });

    it('bills thinking tokens as output', async () => {
      const { sut } = routerFor(env);
      const model = await sut.resolve({ provider: 'gemini', model: 'gemini-2.5-flash' });
      server.reply(reply.text('ok', { reasoning: 'hmm', usage: { inputTokens: 10, outputTokens: 5, reasoningTokens: 20 } }));

      const turn = await sut.complete(requestFor(model));

      expect(turn.usage).toEqual({ inputTokens: 10, outputTokens: 25 });
      expect(turn.costUsd).toBeCloseTo((10 * 0.3 + 25 * 2.5) / 1e6, 12);
    });
  });
});
