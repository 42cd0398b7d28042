import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ValidationError } from '@packetagent/contracts';
import { envProviderKeys, providerConfigFromEnv } from './config';

describe(providerConfigFromEnv.name, () => {
  it('has a default for every setting', () => {
    const config = providerConfigFromEnv({});

    expect(config).toEqual({
      priority: ['anthropic', 'openai', 'gemini', 'openrouter', 'minimax', 'local'],
      anthropic: { baseUrl: undefined },
      openai: { baseUrl: undefined },
      gemini: { baseUrl: undefined },
      openrouter: { baseUrl: 'https://openrouter.ai/api/v1', referer: undefined, title: 'PacketAgent' },
      minimax: { baseUrl: 'https://api.minimax.io/v1' },
      local: { baseUrl: undefined, api: 'openai', model: undefined, contextWindow: 32_768, maxOutputTokens: 8_192 },
      scriptsDir: undefined,
      catalogExtra: [],
      retry: { maxAttempts: 4, attemptTimeoutMs: 120_000, baseDelayMs: 1_000, maxDelayMs: 30_000, maxRetryAfterMs: 60_000 },
    });
  });

  it('reads every variable', () => {
    const config = providerConfigFromEnv({
      PACKETAGENT_PROVIDER_PRIORITY: 'local,openai,openai',
      PACKETAGENT_ANTHROPIC_BASE_URL: 'http://127.0.0.1:1/',
      PACKETAGENT_LOCAL_BASE_URL: 'http://127.0.0.1:11434',
      PACKETAGENT_LOCAL_API: 'ollama',
      PACKETAGENT_LOCAL_MODEL: 'qwen3:8b',
      PACKETAGENT_PROVIDER_MAX_ATTEMPTS: '2',
      PACKETAGENT_PROVIDER_ATTEMPT_TIMEOUT_MS: '5000',
      PACKETAGENT_SCRIPTS_DIR: '/srv/scripts',
    });

    expect(config).toMatchObject({
      priority: ['local', 'openai'],
      anthropic: { baseUrl: 'http://127.0.0.1:1/' },
      local: { baseUrl: 'http://127.0.0.1:11434', api: 'ollama', model: 'qwen3:8b' },
      scriptsDir: '/srv/scripts',
      retry: { maxAttempts: 2, attemptTimeoutMs: 5_000 },
    });
  });

  it('names every bad variable at once', () => {
    const error = (() => {
      try {
        return providerConfigFromEnv({
          PACKETAGENT_PROVIDER_PRIORITY: 'anthropic,scripted,acme',
          PACKETAGENT_OPENAI_BASE_URL: 'ftp://example.com',
          PACKETAGENT_LOCAL_API: 'lmstudio',
          PACKETAGENT_PROVIDER_MAX_ATTEMPTS: '0',
        });
      } catch (e) {
        return e;
      }
    })();

    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues.map((issue) => issue.path).sort()).toEqual(['PACKETAGENT_LOCAL_API', 'PACKETAGENT_OPENAI_BASE_URL', 'PACKETAGENT_PROVIDER_MAX_ATTEMPTS']);
    expect(() => providerConfigFromEnv({ PACKETAGENT_PROVIDER_PRIORITY: 'anthropic,scripted,acme' })).toThrow(/scripted is never chosen by a preset.*unknown provider "acme"/);
  });

  describe('PACKETAGENT_MODEL_CATALOG_EXTRA', () => {
    let dir: string;
    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), 'packetagent-catalog-'));
    });
    afterEach(() => rm(dir, { recursive: true, force: true }));

    it('reads entries from a file, free local models included', async () => {
      const file = join(dir, 'extra.json');
      await writeFile(file, JSON.stringify([{ provider: 'local', model: 'llama3.1:70b', contextWindow: 131072, maxOutputTokens: 4096 }]));

      const config = providerConfigFromEnv({ PACKETAGENT_MODEL_CATALOG_EXTRA: file });

      expect(config.catalogExtra).toEqual([
        {
          provider: 'local',
          model: 'llama3.1:70b',
          contextWindow: 131_072,
          maxOutputTokens: 4_096,
          capabilities: { tools: true, structuredOutput: true, streaming: true },
          pricing: { inputPerMTokUsd: 0, outputPerMTokUsd: 0 },
          origin: 'extra',
        },
      ]);
    });

    it('refuses first-party providers and openrouter models without a price, naming the entry', () => {
      const extra = JSON.stringify([
        { provider: 'anthropic', model: 'claude-x', contextWindow: 1, maxOutputTokens: 1, pricing: { inputPerMTokUsd: 1, outputPerMTokUsd: 1 } },
        { provider: 'openrouter', model: 'x/y', contextWindow: 1000, maxOutputTokens: 100 },
      ]);

      expect(() => providerConfigFromEnv({ PACKETAGENT_MODEL_CATALOG_EXTRA: extra })).toThrow(/PACKETAGENT_MODEL_CATALOG_EXTRA\[0\]\.provider.*PACKETAGENT_MODEL_CATALOG_EXTRA\[1\]\.pricing: an openrouter model needs pricing/);
    });

    it('says when the file cannot be read or is not JSON', async () => {
      const file = join(dir, 'broken.json');
      await writeFile(file, '{not json');

      expect(() => providerConfigFromEnv({ PACKETAGENT_MODEL_CATALOG_EXTRA: join(dir, 'missing.json') })).toThrow(/cannot read .*missing\.json: ENOENT/);
      expect(() => providerConfigFromEnv({ PACKETAGENT_MODEL_CATALOG_EXTRA: file })).toThrow(/broken\.json is not valid JSON/);
    });
  });
});

describe(envProviderKeys.name, () => {
  it('reads each provider key, preferring GEMINI_API_KEY over GOOGLE_API_KEY', async () => {
    const sut = envProviderKeys({ ANTHROPIC_API_KEY: ' a-key ', GOOGLE_API_KEY: 'g-key', OPENROUTER_API_KEY: '' });

    await expect(sut('anthropic')).resolves.toBe('a-key');
    await expect(sut('gemini')).resolves.toBe('g-key');
    await expect(envProviderKeys({ GEMINI_API_KEY: 'gem', GOOGLE_API_KEY: 'goo' })('gemini')).resolves.toBe('gem');
    await expect(sut('openrouter')).resolves.toBeUndefined();
    await expect(sut('scripted')).resolves.toBeUndefined();
  });
});
