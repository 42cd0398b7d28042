import { PROVIDER_NAMES, type ModelPreset, type ProviderName } from '@packetagent/providers';

/** The presets a worker's model may name (`model: { preset }`). */
export const MODEL_PRESETS: readonly ModelPreset[] = ['default', 'fast', 'local'];

const PRESET_PREFIX = 'preset:';

/** A provider as a package names it: a provider, `preset:<name>`, or a name this supervisor does not know. */
export type RequestedProvider =
  | { kind: 'provider'; provider: ProviderName }
  | { kind: 'preset'; preset: ModelPreset }
  | { kind: 'unknown_provider'; name: string }
  | { kind: 'unknown_preset'; preset: string };

export function readRequestedProvider(name: string): RequestedProvider {
  if (name.startsWith(PRESET_PREFIX)) {
    const preset = name.slice(PRESET_PREFIX.length);
    return isPreset(preset) ? { kind: 'preset', preset } : { kind: 'unknown_preset', preset };
  }
  return isProvider(name) ? { kind: 'provider', provider: name } : { kind: 'unknown_provider', name };
}

function isPreset(name: string): name is ModelPreset {
  return (MODEL_PRESETS as readonly string[]).includes(name);
}

function isProvider(name: string): name is ProviderName {
  return (PROVIDER_NAMES as readonly string[]).includes(name);
}
