import type { CatalogProvider, ModelPreset } from './catalog';
import { providerConfigFromEnv } from './config';
import { choosePresetModel } from './preset-choice';

/** A deployment with these provider settings and these providers set up (a key, or for local a server). */
function given(env: Record<string, string>, ...setUp: CatalogProvider[]) {
  const config = providerConfigFromEnv(env);
  const asked: CatalogProvider[] = [];
  return {
    asked,
    when: (preset: ModelPreset) =>
      choosePresetModel(preset, config, (provider) => {
        asked.push(provider);
        return setUp.includes(provider);
      }),
  };
}

const LOCAL_SERVER = { PACKETAGENT_LOCAL_BASE_URL: 'http://127.0.0.1:11434' };

describe(choosePresetModel.name, () => {
  it('takes the first provider in priority order that is set up, with the preset model for it', async () => {
    const sut = given({}, 'openai', 'gemini');

    await expect(sut.when('default')).resolves.toEqual({ chosen: { provider: 'openai', model: 'gpt-5' }, candidates: ['anthropic', 'openai', 'gemini', 'openrouter', 'minimax', 'local'] });
    await expect(sut.when('fast')).resolves.toMatchObject({ chosen: { provider: 'openai', model: 'gpt-5-mini' } });
  });

  it('follows PACKETAGENT_PROVIDER_PRIORITY and asks no further than the provider it takes', async () => {
    const sut = given({ PACKETAGENT_PROVIDER_PRIORITY: 'minimax,gemini,anthropic' }, 'gemini', 'anthropic');

    const choice = await sut.when('fast');

    expect(choice).toEqual({ chosen: { provider: 'gemini', model: 'gemini-2.5-flash' }, candidates: ['minimax', 'gemini', 'anthropic'] });
    expect(sut.asked).toEqual(['minimax', 'gemini']);
  });

  it('chooses nothing when no candidate is set up, and names the candidates it looked at', async () => {
    const sut = given({ PACKETAGENT_PROVIDER_PRIORITY: 'openai,openrouter' });

    await expect(sut.when('default')).resolves.toEqual({ chosen: null, candidates: ['openai', 'openrouter'] });
  });

  it('skips a local server whose model is not named, without asking whether it is set up', async () => {
    const sut = given({ ...LOCAL_SERVER, PACKETAGENT_PROVIDER_PRIORITY: 'local,openai' }, 'local', 'openai');

    await expect(sut.when('default')).resolves.toMatchObject({ chosen: { provider: 'openai', model: 'gpt-5' } });
    await expect(sut.when('local')).resolves.toEqual({ chosen: null, candidates: ['local'] });
    expect(sut.asked).toEqual(['openai']);
  });

  it('takes a local server that has a model, for any preset', async () => {
    const sut = given({ ...LOCAL_SERVER, PACKETAGENT_LOCAL_MODEL: 'qwen3:8b' }, 'local');

    await expect(sut.when('default')).resolves.toMatchObject({ chosen: { provider: 'local', model: 'qwen3:8b' } });
    await expect(sut.when('local')).resolves.toEqual({ chosen: { provider: 'local', model: 'qwen3:8b' }, candidates: ['local'] });
  });

  it('resolves the local preset only to the local server, whatever else is set up', async () => {
    const sut = given({ PACKETAGENT_LOCAL_MODEL: 'qwen3:8b' }, 'anthropic', 'openai');

    await expect(sut.when('local')).resolves.toEqual({ chosen: null, candidates: ['local'] });
    expect(sut.asked).toEqual(['local']);
  });

  it('accepts an asynchronous answer to whether a provider is set up', async () => {
    const config = providerConfigFromEnv({});

    const choice = await choosePresetModel('default', config, async (provider) => provider === 'minimax');

    expect(choice.chosen).toEqual({ provider: 'minimax', model: 'MiniMax-M2' });
  });
});
