import type { ModelProviderAvailability } from '@packetagent/contracts';
import { API_KEY_VARIABLES, PROVIDER_NAMES, type CatalogProvider, type ModelPreset, type PresetChoice } from '@packetagent/providers';
import { MODEL_PRESETS } from './requested-provider';

/** What the supervisor found about one requested provider, with the keys and settings it runs with. */
export type ProviderFinding =
  /** A provider with a catalog: set up when it has a key (local: a server URL). */
  | { kind: 'provider'; provider: CatalogProvider; setUp: boolean }
  /** The scripted provider: usable when scripts can be found (a scripts directory). */
  | { kind: 'scripted'; hasScripts: boolean }
  | { kind: 'preset'; preset: ModelPreset; choice: PresetChoice }
  | { kind: 'unknown_provider'; name: string }
  | { kind: 'unknown_preset'; preset: string };

/** The answer for one requested name: available, or not with a sentence saying why and what to set. */
export function availabilityOf(name: string, finding: ProviderFinding): ModelProviderAvailability {
  switch (finding.kind) {
    case 'provider':
      return finding.setUp ? available(name) : unavailable(name, notSetUp(finding.provider));
    case 'scripted':
      return finding.hasScripts ? available(name) : unavailable(name, 'no scripts directory is configured: set PACKETAGENT_SCRIPTS_DIR');
    case 'preset': {
      const { chosen, candidates } = finding.choice;
      if (chosen) return { ...available(name), resolvesTo: chosen.provider };
      return { ...unavailable(name, presetUnavailable(finding.preset, candidates)), resolvesTo: null };
    }
    case 'unknown_provider':
      return unavailable(name, `unknown provider "${finding.name}" (known: ${PROVIDER_NAMES.join(', ')}, or preset:<${MODEL_PRESETS.join('|')}>)`);
    case 'unknown_preset':
      return { ...unavailable(name, `unknown preset "${finding.preset}" (known: ${MODEL_PRESETS.join(', ')})`), resolvesTo: null };
  }
}

function available(provider: string): ModelProviderAvailability {
  return { provider, available: true, reason: null };
}

function unavailable(provider: string, reason: string): ModelProviderAvailability {
  return { provider, available: false, reason };
}

function notSetUp(provider: CatalogProvider): string {
  if (provider === 'local') return 'the local server is not configured: set PACKETAGENT_LOCAL_BASE_URL';
  return `no API key: set ${API_KEY_VARIABLES[provider].join(' or ')}`;
}

function presetUnavailable(preset: ModelPreset, candidates: readonly CatalogProvider[]): string {
  if (preset === 'local') return 'preset local resolves to no configured provider: set PACKETAGENT_LOCAL_BASE_URL and PACKETAGENT_LOCAL_MODEL';
  return `preset ${preset} resolves to no configured provider (tried in order: ${candidates.join(', ')}; see PACKETAGENT_PROVIDER_PRIORITY)`;
}
