import { drafterView } from './drafter-view';

describe(drafterView.name, () => {
  it('names the provider, model, structured output and cost of a model draft', () => {
    const sut = drafterView({ kind: 'model', provider: 'local', model: 'qwen3-8b', structuredOutput: 'native', costUsd: 0, usage: { inputTokens: 1800, outputTokens: 400 } });
    expect(sut.title).toBe('Drafted by local/qwen3-8b');
    expect(sut.byModel).toBe(true);
    expect(sut.facts).toEqual([
      { term: 'Provider', detail: 'local' },
      { term: 'Model', detail: 'qwen3-8b' },
      { term: 'Structured output', detail: expect.stringMatching(/^native: /) },
      { term: 'Cost', detail: '$0.00 (1800 input, 400 output tokens)' },
    ]);
  });

  it('says when the schema was given in the prompt', () => {
    const sut = drafterView({ kind: 'model', provider: 'local', model: 'plain', structuredOutput: 'prompt', costUsd: 0.0042, usage: { inputTokens: 10, outputTokens: 5 } });
    expect(sut.facts.find((fact) => fact.term === 'Structured output')?.detail).toMatch(/^in the prompt: /);
    expect(sut.facts.find((fact) => fact.term === 'Cost')?.detail).toBe('$0.004200 (10 input, 5 output tokens)');
  });

  it('labels a builder draft as drafted without a model, with its template and why no model drafted it', () => {
    const sut = drafterView({ kind: 'builder', label: 'drafted without a model', template: { id: 'research-summarizer', title: 'Research summarizer' }, reason: 'no API key: set OPENAI_API_KEY' });
    expect(sut).toEqual({
      title: 'Drafted without a model',
      byModel: false,
      facts: [
        { term: 'Started from', detail: 'the Research summarizer template (research-summarizer)' },
        { term: 'Why no model', detail: 'no API key: set OPENAI_API_KEY' },
      ],
    });
  });
});
