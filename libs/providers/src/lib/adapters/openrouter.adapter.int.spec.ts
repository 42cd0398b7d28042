import { FakeOpenAiServer, reply } from '../../testing';
import { describeAdapterContract, requestFor, routerFor, TEST_KEY } from './adapter-contract.testkit';
import { OpenRouterAdapter } from './openrouter.adapter';

const bearer = (value: unknown) => (typeof value === 'string' ? value.replace(/^Bearer /, '') : undefined);

describe(OpenRouterAdapter.name, () => {
  describeAdapterContract({
    provider: 'openrouter',
    model: 'openai/gpt-5-mini',
    createServer: () => new FakeOpenAiServer('/api/v1'),
    env: (server) => ({ PACKETAGENT_OPENROUTER_BASE_URL: server.baseUrl }),
    keyOf: (request) => bearer(request.headers.authorization),
  });

  describe('wire format', () => {
    const server = new FakeOpenAiServer('/api/v1');
    let env: Record<string, string>;

    beforeAll(async () => {
      await server.start();
      env = {
        PACKETAGENT_OPENROUTER_BASE_URL: server.baseUrl,
        PACKETAGENT_OPENROUTER_REFERER: 'https://packetagent.example',
        PACKETAGENT_OPENROUTER_TITLE: 'PacketAgent Tests',
      };
    });
    afterAll(() => server.close());
    beforeEach(() => server.reset());

    it("sends OpenRouter's attribution headers and its max_tokens field", async () => {
      const { sut } = routerFor(env);
      const model = await sut.resolve({ provider: 'openrouter', model: 'anthropic/claude-sonnet-4.5' });
      server.reply(reply.text('hi'));

      await sut.complete(requestFor(model, { maxOutputTokens: 100 }));

      const received = server.requests[0]!;
      expect(received.path).toBe('/api/v1/chat/completions');
      expect(received.headers).toMatchObject({ authorization: `Bearer ${TEST_KEY}`, 'http-referer': 'https://packetagent.example', 'x-title': 'PacketAgent Tests' });
      expect(received.body).toMatchObject({ model: 'anthropic/claude-sonnet-4.5', max_tokens: 100 });
      expect(received.body).not.toHaveProperty('max_completion_tokens');
    });

    it('keeps streamed reasoning_details in the native turn and sends them back for the same model', async () => {
      const { sut } = routerFor(env);
      const model = await sut.resolve({ provider: 'openrouter', model: 'openai/gpt-5-mini' });
      server.reply(reply.text('Answer.', { reasoning: 'Reasoning that spans several chunks.' }), reply.text('Next.'));

      const first = await sut.complete(requestFor(model, { stream: true }));
      await sut.complete(
        requestFor(model, {
          messages: [
            { role: 'user', content: 'Say hello.' },
            { role: 'assistant', content: first.text, toolCalls: [], native: first.native },
            { role: 'user', content: 'Go on.' },
          ],
        }),
      );

      expect(first.text).toBe('Answer.');
      expect(first.native.payload).toMatchObject({ reasoning_details: [{ type: 'reasoning.text', index: 0, text: 'Reasoning that spans several chunks.' }] });
      expect(server.requests[1]!.body).toMatchObject({ messages: [{ role: 'system' }, { role: 'user' }, first.native.payload, { role: 'user', content: 'Go on.' }] });
    });

    it('does not send a response format to a model the catalog lists without structured output', async () => {
      const { sut } = routerFor(env);
      const model = await sut.resolve({ provider: 'openrouter', model: 'anthropic/claude-haiku-4.5' });
      server.reply(reply.text('{}'));

      await sut.complete(requestFor(model, { outputSchema: { type: 'object' } }));

      expect(server.requests[0]!.body).not.toHaveProperty('response_format');
    });
  });
});
