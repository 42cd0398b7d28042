import { MODEL_CATALOG, ModelCatalog, PRESET_MODELS, priceUsage } from './catalog';

describe(ModelCatalog.name, () => {
  const sut = new ModelCatalog();

  it('lists each model once, with a price and limits', () => {
    const keys = MODEL_CATALOG.map((entry) => `${entry.provider}/${entry.model}`);

    expect(new Set(keys).size).toBe(keys.length);
    for (const entry of MODEL_CATALOG) {
      expect(entry.pricing.inputPerMTokUsd).toBeGreaterThan(0);
      expect(entry.pricing.outputPerMTokUsd).toBeGreaterThanOrEqual(entry.pricing.inputPerMTokUsd);
      expect(entry.maxOutputTokens).toBeLessThanOrEqual(entry.contextWindow);
    }
  });

  it('covers the flagship and fast models the presets name', () => {
    for (const preset of Object.values(PRESET_MODELS)) {
      for (const [provider, model] of Object.entries(preset)) {
        expect(() => sut.lookup(provider as 'anthropic', model!)).not.toThrow();
      }
    }
    for (const [provider, model] of [
      ['anthropic', 'claude-sonnet-4-5'],
      ['anthropic', 'claude-opus-4-1'],
      ['openai', 'gpt-5'],
      ['openai', 'gpt-4.1'],
      ['openai', 'gpt-4o-mini'],
      ['gemini', 'gemini-2.5-pro'],
      ['minimax', 'MiniMax-M2'],
    ] as const) {
      expect(sut.lookup(provider, model).origin).toBe('builtin');
    }
  });

  it('makes up a free entry for any local model, with the configured limits', () => {
    const local = new ModelCatalog({ local: { contextWindow: 8_192, maxOutputTokens: 1_024 } });

    expect(local.lookup('local', 'anything:latest')).toEqual({
      provider: 'local',
      model: 'anything:latest',
      contextWindow: 8_192,
      maxOutputTokens: 1_024,
      capabilities: { tools: true, structuredOutput: true, streaming: true },
      pricing: { inputPerMTokUsd: 0, outputPerMTokUsd: 0 },
      origin: 'local',
    });
  });

  it('refuses extra entries for providers it prices itself', () => {
    const entry = { ...sut.lookup('openai', 'gpt-5'), model: 'gpt-6' };

    expect(() => new ModelCatalog({ extra: [entry] })).toThrow(/only local and openrouter models can be added/);
  });
});

describe(priceUsage.name, () => {
  it('prices input and output per million tokens', () => {
    const entry = new ModelCatalog().lookup('openai', 'gpt-4o-mini');

    expect(priceUsage(entry, { inputTokens: 1_000_000, outputTokens: 1_000_000 })).toBeCloseTo(0.75, 10);
    expect(priceUsage(entry, { inputTokens: 0, outputTokens: 0 })).toBe(0);
  });
});
