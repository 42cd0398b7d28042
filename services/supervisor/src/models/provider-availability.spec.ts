import { availabilityOf, type ProviderFinding } from './provider-availability';

function given(finding: ProviderFinding) {
  return { whenAnsweredFor: (name: string) => availabilityOf(name, finding) };
}

describe(availabilityOf.name, () => {
  it('answers a provider that is set up as available, without a reason', () => {
    const sut = given({ kind: 'provider', provider: 'anthropic', setUp: true }).whenAnsweredFor('anthropic');

    expect(sut).toEqual({ provider: 'anthropic', available: true, reason: null });
  });

  it('names every variable a missing key may be set in', () => {
    expect(given({ kind: 'provider', provider: 'anthropic', setUp: false }).whenAnsweredFor('anthropic')).toEqual({
      provider: 'anthropic',
      available: false,
      reason: 'no API key: set ANTHROPIC_API_KEY',
    });
    expect(given({ kind: 'provider', provider: 'gemini', setUp: false }).whenAnsweredFor('gemini').reason).toBe('no API key: set GEMINI_API_KEY or GOOGLE_API_KEY');
  });

  it('asks for the server URL of a local provider that has none', () => {
    const sut = given({ kind: 'provider', provider: 'local', setUp: false }).whenAnsweredFor('local');

    expect(sut).toEqual({ provider: 'local', available: false, reason: 'the local server is not configured: set PACKETAGENT_LOCAL_BASE_URL' });
  });

  it('answers the scripted provider by whether scripts can be found', () => {
    expect(given({ kind: 'scripted', hasScripts: true }).whenAnsweredFor('scripted')).toEqual({ provider: 'scripted', available: true, reason: null });
    expect(given({ kind: 'scripted', hasScripts: false }).whenAnsweredFor('scripted')).toEqual({
      provider: 'scripted',
      available: false,
      reason: 'no scripts directory is configured: set PACKETAGENT_SCRIPTS_DIR',
    });
  });

  it('names the provider a preset resolves to', () => {
    const sut = given({ kind: 'preset', preset: 'fast', choice: { chosen: { provider: 'openai', model: 'gpt-5-mini' }, candidates: ['anthropic', 'openai'] } }).whenAnsweredFor('preset:fast');

    expect(sut).toEqual({ provider: 'preset:fast', available: true, reason: null, resolvesTo: 'openai' });
  });

  it('says which providers a preset that resolves to none tried, in order', () => {
    const sut = given({ kind: 'preset', preset: 'fast', choice: { chosen: null, candidates: ['gemini', 'openai'] } }).whenAnsweredFor('preset:fast');

    expect(sut).toEqual({
      provider: 'preset:fast',
      available: false,
      reason: 'preset fast resolves to no configured provider (tried in order: gemini, openai; see PACKETAGENT_PROVIDER_PRIORITY)',
      resolvesTo: null,
    });
  });

  it('asks for both the local server and its model when the local preset resolves to none', () => {
    const sut = given({ kind: 'preset', preset: 'local', choice: { chosen: null, candidates: ['local'] } }).whenAnsweredFor('preset:local');

    expect(sut).toMatchObject({ available: false, resolvesTo: null, reason: 'preset local resolves to no configured provider: set PACKETAGENT_LOCAL_BASE_URL and PACKETAGENT_LOCAL_MODEL' });
  });

  it('answers a name it does not know as not available, listing the names it knows', () => {
    expect(given({ kind: 'unknown_provider', name: 'mistral' }).whenAnsweredFor('mistral')).toEqual({
      provider: 'mistral',
      available: false,
      reason: 'unknown provider "mistral" (known: anthropic, openai, gemini, openrouter, minimax, local, scripted, or preset:<default|fast|local>)',
    });
    expect(given({ kind: 'unknown_preset', preset: 'turbo' }).whenAnsweredFor('preset:turbo')).toEqual({
      provider: 'preset:turbo',
      available: false,
      reason: 'unknown preset "turbo" (known: default, fast, local)',
      resolvesTo: null,
    });
  });
});
