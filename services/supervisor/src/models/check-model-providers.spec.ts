import { CheckModelProvidersRequestSchema } from '@packetagent/contracts';
import { envProviderKeys, ProviderRouter, providerConfigFromEnv } from '@packetagent/providers';
import { CheckModelProviders } from './check-model-providers';

/** A supervisor whose router is built from this environment, as SupervisorModule builds it. */
function given(env: Record<string, string>) {
  const sut = new CheckModelProviders(new ProviderRouter({ config: providerConfigFromEnv(env), keys: envProviderKeys(env) }));
  return {
    whenChecking: async (...providers: string[]) => (await sut.execute(CheckModelProvidersRequestSchema.parse({ workspaceId: 'ws_acme', providers }))).providers,
  };
}

const LOCAL_SERVER = { PACKETAGENT_LOCAL_BASE_URL: 'http://127.0.0.1:11434' };

describe(CheckModelProviders.name, () => {
  it('answers each requested name in the order asked, repeats included', async () => {
    const sut = await given({ OPENAI_API_KEY: 'sk-test' }).whenChecking('openai', 'anthropic', 'openai');

    expect(sut).toEqual([
      { provider: 'openai', available: true, reason: null },
      { provider: 'anthropic', available: false, reason: 'no API key: set ANTHROPIC_API_KEY' },
      { provider: 'openai', available: true, reason: null },
    ]);
  });

  it('takes a blank key for no key, as a run would', async () => {
    const sut = await given({ MINIMAX_API_KEY: '   ' }).whenChecking('minimax');

    expect(sut).toEqual([{ provider: 'minimax', available: false, reason: 'no API key: set MINIMAX_API_KEY' }]);
  });

  it('resolves presets through the priority list, as a run would', async () => {
    const sut = await given({ PACKETAGENT_PROVIDER_PRIORITY: 'gemini,anthropic', ANTHROPIC_API_KEY: 'a', GOOGLE_API_KEY: 'g' }).whenChecking('preset:default', 'preset:fast');

    expect(sut).toEqual([
      { provider: 'preset:default', available: true, reason: null, resolvesTo: 'gemini' },
      { provider: 'preset:fast', available: true, reason: null, resolvesTo: 'gemini' },
    ]);
  });

  it('counts a local server as the local provider, but as a preset target only with its model named', async () => {
    const withoutModel = await given(LOCAL_SERVER).whenChecking('local', 'preset:local', 'preset:default');
    const withModel = await given({ ...LOCAL_SERVER, PACKETAGENT_LOCAL_MODEL: 'qwen3:8b' }).whenChecking('preset:local', 'preset:default');

    expect(withoutModel).toEqual([
      { provider: 'local', available: true, reason: null },
      expect.objectContaining({ provider: 'preset:local', available: false, resolvesTo: null }),
      expect.objectContaining({ provider: 'preset:default', available: false, resolvesTo: null }),
    ]);
    expect(withModel).toEqual([
      { provider: 'preset:local', available: true, reason: null, resolvesTo: 'local' },
      { provider: 'preset:default', available: true, reason: null, resolvesTo: 'local' },
    ]);
  });

  it('serves the scripted provider only with a scripts directory configured', async () => {
    const without = await given({}).whenChecking('scripted');
    const withDir = await given({ PACKETAGENT_SCRIPTS_DIR: '/srv/packetagent/scripts' }).whenChecking('scripted', 'preset:default');

    expect(without).toEqual([{ provider: 'scripted', available: false, reason: 'no scripts directory is configured: set PACKETAGENT_SCRIPTS_DIR' }]);
    expect(withDir).toEqual([{ provider: 'scripted', available: true, reason: null }, expect.objectContaining({ provider: 'preset:default', available: false, resolvesTo: null })]);
  });

  it('answers the names it does not know without failing the others', async () => {
    const sut = await given({ OPENROUTER_API_KEY: 'or' }).whenChecking('mistral', 'preset:turbo', 'openrouter');

    expect(sut).toEqual([
      expect.objectContaining({ provider: 'mistral', available: false }),
      expect.objectContaining({ provider: 'preset:turbo', available: false, resolvesTo: null }),
      { provider: 'openrouter', available: true, reason: null },
    ]);
  });
});

describe('supervisor.models.check request', () => {
  it('takes 1 to 64 names', () => {
    const names = (count: number) => Array.from({ length: count }, (_, index) => `provider-${index}`);

    expect(CheckModelProvidersRequestSchema.safeParse({ workspaceId: 'ws_acme', providers: [] }).success).toBe(false);
    expect(CheckModelProvidersRequestSchema.safeParse({ workspaceId: 'ws_acme', providers: names(64) }).success).toBe(true);
    expect(CheckModelProvidersRequestSchema.safeParse({ workspaceId: 'ws_acme', providers: names(65) }).success).toBe(false);
  });
});
