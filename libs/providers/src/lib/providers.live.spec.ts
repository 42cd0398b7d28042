import type { ModelSpec } from '@packetagent/contracts';
import { providerConfigFromEnv } from './config';
import { ProviderRouter } from './router';

/**
 * One short real call per provider. Opt-in: they cost money and need the network, so each runs
 * only with PACKETAGENT_LIVE_TESTS=1 and that provider's key (or local server) in the environment.
 */
const LIVE = process.env['PACKETAGENT_LIVE_TESTS'] === '1';

const CASES: { spec: Extract<ModelSpec, { provider: string }>; needs: string[] }[] = [
  { spec: { provider: 'anthropic', model: 'claude-haiku-4-5' }, needs: ['ANTHROPIC_API_KEY'] },
  { spec: { provider: 'openai', model: 'gpt-5-mini' }, needs: ['OPENAI_API_KEY'] },
  { spec: { provider: 'gemini', model: 'gemini-2.5-flash' }, needs: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'] },
  { spec: { provider: 'openrouter', model: 'google/gemini-2.5-flash' }, needs: ['OPENROUTER_API_KEY'] },
  { spec: { provider: 'minimax', model: 'MiniMax-M2' }, needs: ['MINIMAX_API_KEY'] },
  { spec: { provider: 'local', model: process.env['PACKETAGENT_LOCAL_MODEL'] ?? '(PACKETAGENT_LOCAL_MODEL)' }, needs: ['PACKETAGENT_LOCAL_BASE_URL', 'PACKETAGENT_LOCAL_MODEL'] },
];

function skipReason(needs: string[], provider: string): string | undefined {
  if (!LIVE) return 'PACKETAGENT_LIVE_TESTS is not 1';
  const present = needs.filter((name) => process.env[name]?.trim());
  if (provider === 'local') return present.length === needs.length ? undefined : `${needs.join(' and ')} not set`;
  return present.length > 0 ? undefined : `${needs.join(' or ')} not set`;
}

describe(`${ProviderRouter.name} against live providers`, () => {
  const skipped = CASES.map((item) => [item.spec.provider, skipReason(item.needs, item.spec.provider)] as const).filter(([, reason]) => reason !== undefined);
  if (skipped.length > 0) {
    console.info(`live provider tests skipped: ${skipped.map(([provider, reason]) => `${provider} (${reason})`).join(', ')}`);
  }

  for (const { spec, needs } of CASES) {
    const reason = skipReason(needs, spec.provider);
    const test = reason === undefined ? it : it.skip;

    test(`${spec.provider} ${spec.model} answers one short call${reason ? ` [skipped: ${reason}]` : ''}`, async () => {
      const sut = new ProviderRouter({ config: providerConfigFromEnv(process.env) });
      const model = await sut.resolve(spec);

      const turn = await sut.complete({ model, system: 'Answer with one word.', messages: [{ role: 'user', content: 'Say ok.' }], tools: [], maxOutputTokens: 512 });

      expect(turn.text.length).toBeGreaterThan(0);
      expect(turn.usage.inputTokens).toBeGreaterThan(0);
      expect(turn.costUsd).toBeGreaterThanOrEqual(0);
    }, 60_000);
  }
});
