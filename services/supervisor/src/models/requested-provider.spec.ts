import { readRequestedProvider } from './requested-provider';

describe(readRequestedProvider.name, () => {
  it.each(['anthropic', 'openai', 'gemini', 'openrouter', 'minimax', 'local', 'scripted'])('reads "%s" as a provider', (name) => {
    expect(readRequestedProvider(name)).toEqual({ kind: 'provider', provider: name });
  });

  it.each(['default', 'fast', 'local'])('reads "preset:%s" as a preset', (preset) => {
    expect(readRequestedProvider(`preset:${preset}`)).toEqual({ kind: 'preset', preset });
  });

  it('tells an unknown preset from an unknown provider', () => {
    expect(readRequestedProvider('preset:turbo')).toEqual({ kind: 'unknown_preset', preset: 'turbo' });
    expect(readRequestedProvider('preset:')).toEqual({ kind: 'unknown_preset', preset: '' });
    expect(readRequestedProvider('mistral')).toEqual({ kind: 'unknown_provider', name: 'mistral' });
  });

  it('reads names exactly as written: no case folding, no trimming', () => {
    expect(readRequestedProvider('Anthropic')).toEqual({ kind: 'unknown_provider', name: 'Anthropic' });
    expect(readRequestedProvider(' openai')).toEqual({ kind: 'unknown_provider', name: ' openai' });
    expect(readRequestedProvider('PRESET:fast')).toEqual({ kind: 'unknown_provider', name: 'PRESET:fast' });
  });
});
