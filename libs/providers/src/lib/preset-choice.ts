import { PRESET_MODELS, type CatalogProvider, type ModelPreset } from './catalog';
import type { ProviderConfig } from './config';

/** What a preset resolves to: the provider and model it uses (null when none is usable), and the providers it looks at, in order. */
export interface PresetChoice {
  chosen: { provider: CatalogProvider; model: string } | null;
  candidates: CatalogProvider[];
}

/**
 * The provider a preset uses: the first in priority order that has a model for the preset and is
 * set up. The local preset looks at the local server only, whatever the priority list says, and
 * local is skipped unless PACKETAGENT_LOCAL_MODEL names its model. The scripted provider is never
 * a candidate. `isSetUp` is asked in order and no further than the provider chosen.
 */
export async function choosePresetModel(
  preset: ModelPreset,
  config: Pick<ProviderConfig, 'priority' | 'local'>,
  isSetUp: (provider: CatalogProvider) => boolean | Promise<boolean>,
): Promise<PresetChoice> {
  const candidates: CatalogProvider[] = preset === 'local' ? ['local'] : [...config.priority];
  for (const provider of candidates) {
    const model = provider === 'local' ? config.local.model : PRESET_MODELS[preset as 'default' | 'fast'][provider];
    if (!model || !(await isSetUp(provider))) continue;
    return { chosen: { provider, model }, candidates };
  }
  return { chosen: null, candidates };
}
