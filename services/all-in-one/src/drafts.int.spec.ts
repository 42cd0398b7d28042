import { ProviderFakes } from '@packetagent/providers';
import { bearer } from './testing/app.testkit';
import { DRAFT_PROMPT, DRAFTED_DEFINITION } from './testing/drafted-worker.fixture';
import { startExecutionApp, type ExecutionApp } from './testing/execution.testkit';

interface Draft {
  drafter: { kind: 'model' | 'builder'; provider?: string; model?: string; structuredOutput?: string; label?: string; template?: { id: string }; reason?: string };
  source: string;
  valid: boolean;
  errors: { path: string; message: string }[];
  removedGrants: { tool: string; reason: string }[];
  notes: string[];
  readiness: { ready: boolean; missing: { kind: string; name: string }[] } | null;
}

describe('prompt-to-worker drafts', () => {
  const server = new ProviderFakes.FakeOpenAiServer();
  let app: ExecutionApp;
  const draft = (body: Record<string, unknown>, key?: string) => app.sut.request<Draft & { code: string }>('POST', `/api/v1/workspaces/${app.ws}/workers/draft`, { body, headers: bearer(key ?? app.owner) });

  beforeAll(async () => {
    await server.start();
    app = await startExecutionApp({
      env: {
        PACKETAGENT_LOCAL_BASE_URL: server.url,
        PACKETAGENT_LOCAL_API: 'openai',
        // `plain` stands for a local model without structured output: the schema goes in the prompt.
        PACKETAGENT_MODEL_CATALOG_EXTRA: JSON.stringify([{ provider: 'local', model: 'plain', contextWindow: 32768, maxOutputTokens: 8192, capabilities: { structuredOutput: false } }]),
      },
    });
  });
  beforeEach(() => server.reset());
  afterAll(async () => {
    await app.close();
    await server.close();
  });

  it('asks a model that supports it through native structured output, removes the grant nobody asked for, and reports validity and readiness', async () => {
    server.reply(ProviderFakes.reply.text(JSON.stringify(DRAFTED_DEFINITION), { usage: { inputTokens: 1800, outputTokens: 400 } }));

    const answer = await draft({ prompt: DRAFT_PROMPT, model: { provider: 'local', model: 'qwen3-8b' } });

    expect(answer.status).toBe(200);
    expect(answer.body.drafter).toMatchObject({ kind: 'model', provider: 'local', model: 'qwen3-8b', structuredOutput: 'native' });
    const sent = server.requests[0]!.body as { response_format?: { type: string; json_schema: { schema: { properties: Record<string, unknown> } } }; messages: { role: string; content: string }[] };
    expect(sent.response_format?.type).toBe('json_schema');
    expect(Object.keys(sent.response_format!.json_schema.schema.properties)).toEqual(expect.arrayContaining(['apiVersion', 'model', 'tools', 'triggers']));
    expect(sent.messages.at(-1)!.content).toContain(DRAFT_PROMPT);

    expect(answer.body.removedGrants).toEqual([{ tool: 'run_command', reason: 'the request does not ask for what run_command does' }]);
    expect(answer.body.valid).toBe(true);
    expect(answer.body.errors).toEqual([]);
    expect(answer.body.source).not.toContain('run_command');
    expect(answer.body.source).toContain('name: status-summary');
    expect(answer.body.readiness!.missing).toEqual(expect.arrayContaining([expect.objectContaining({ kind: 'credential', name: 'ops_webhook' })]));
  });

  it('gives the schema in the prompt, once, to a model without structured output, and reads its fenced answer', async () => {
    server.reply(ProviderFakes.reply.text(`Here is the worker:\n\`\`\`json\n${JSON.stringify(DRAFTED_DEFINITION)}\n\`\`\``));

    const answer = await draft({ prompt: DRAFT_PROMPT, model: { provider: 'local', model: 'plain' } });

    expect(answer.status).toBe(200);
    expect(answer.body.drafter).toMatchObject({ kind: 'model', structuredOutput: 'prompt' });
    expect(server.requests).toHaveLength(1);
    const sent = server.requests[0]!.body as { response_format?: unknown; messages: { role: string; content: string }[] };
    expect(sent.response_format).toBeUndefined();
    expect(sent.messages[0]).toMatchObject({ role: 'system', content: expect.stringContaining('must match this JSON Schema') });
    expect(answer.body.valid).toBe(true);
  });

  it('returns an invalid draft for review with every issue at its path, and a non-JSON answer as such', async () => {
    server.reply(ProviderFakes.reply.text(JSON.stringify({ ...DRAFTED_DEFINITION, bounds: { maxIterations: 0 }, name: 'Bad Name' })));
    const invalid = await draft({ prompt: DRAFT_PROMPT, model: { provider: 'local', model: 'qwen3-8b' } });
    expect(invalid.status).toBe(200);
    expect(invalid.body.valid).toBe(false);
    expect(invalid.body.errors.map((error) => error.path).sort()).toEqual(['bounds.maxIterations', 'name']);
    expect(invalid.body.readiness).toBeNull();

    server.reply(ProviderFakes.reply.text('Sorry, I cannot write that.'));
    const prose = await draft({ prompt: DRAFT_PROMPT, model: { provider: 'local', model: 'qwen3-8b' } });
    expect(prose.body).toMatchObject({ valid: false, source: 'Sorry, I cannot write that.', errors: [{ path: '(answer)', message: 'the model did not answer a JSON object' }] });
  });

  it('drafts without a model when the provider asked for is not ready, labelled so, from the closest template', async () => {
    const answer = await draft({ prompt: 'Summarize the research paper at https://arxiv.org/abs/2401.00001 on demand', model: { provider: 'openai', model: 'gpt-4.1' } });

    expect(answer.status).toBe(200);
    expect(answer.body.drafter).toMatchObject({ kind: 'builder', label: 'drafted without a model', template: { id: 'research-summarizer' }, reason: expect.stringContaining('OPENAI_API_KEY') });
    expect(answer.body.source.split('\n')[0]).toContain('Drafted without a model');
    expect(answer.body.valid).toBe(true);
    expect(server.requests).toHaveLength(0);
  });

  it('refuses a viewer, an empty prompt and a prompt too long, with problem+json', async () => {
    const viewer = (await app.sut.request<{ secret: string }>('POST', `/api/v1/workspaces/${app.ws}/api-keys`, { body: { name: 'v', role: 'viewer' }, headers: bearer(app.owner) })).body.secret;
    expect((await draft({ prompt: DRAFT_PROMPT }, viewer)).status).toBe(403);
    const empty = await draft({ prompt: '   ' });
    expect(empty.status).toBe(400);
    expect(empty.headers.get('content-type')).toContain('application/problem+json');
    expect((await draft({ prompt: 'x'.repeat(4001) })).status).toBe(400);
  });
});
