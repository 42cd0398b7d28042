import { FakeOpenAiServer, reply } from '../../testing';
import { describeAdapterContract, requestFor, routerFor, TEST_KEY } from './adapter-contract.testkit';
import { MiniMaxAdapter } from './minimax.adapter';

const bearer = (value: unknown) => (typeof value === 'string' ? value.replace(/^Bearer /, '') : undefined);

describe(MiniMaxAdapter.name, () => {
  describeAdapterContract({
    provider: 'minimax',
    model: 'MiniMax-M2',
    createServer: () => new FakeOpenAiServer(),
    env: (server) => ({ PACKETAGENT_MINIMAX_BASE_URL: server.baseUrl }),
    keyOf: (request) => bearer(request.headers.authorization),
  });

  describe('wire format', () => {
    const server = new FakeOpenAiServer();
    let env: Record<string, string>;

    beforeAll(async () => {
      await server.start();
      env = { PACKETAGENT_MINIMAX_BASE_URL: server.baseUrl };
    });
    afterAll(() => server.close());
    beforeEach(() => server.reset());

    it('asks for split reasoning and uses max_completion_tokens', async () => {
      const { sut } = routerFor(env);
      const model = await sut.resolve({ provider: 'minimax', model: 'MiniMax-M2' });
      server.reply(reply.text('hi'));

      await sut.complete(requestFor(model, { maxOutputTokens: 64 }));

      expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${TEST_KEY}`);
      expect(server.requests[0]!.body).toMatchObject({ model: 'MiniMax-M2', reasoning_split: true, max_completion_tokens: 64 });
    });

    it('leaves inline <think> reasoning out of the text but keeps it in the native turn', async () => {
      const { sut } = routerFor(env);
      const model = await sut.resolve({ provider: 'minimax', model: 'MiniMax-M2' });
      server.reply(reply.text('<think>The user greets me.</think>\n\nHello!'));

      const turn = await sut.complete(requestFor(model));

      expect(turn.text).toBe('Hello!');
      expect(turn.native.payload).toMatchObject({ content: '<think>The user greets me.</think>\n\nHello!' });
    });
  });
});
