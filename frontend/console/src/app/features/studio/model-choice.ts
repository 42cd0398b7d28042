/** The model that drafts: a preset, or one provider's model named by the person. Pure. */

export const DRAFT_PROVIDERS = [
  { value: 'anthropic', label: 'Anthropic' },
  { value: 'openai', label: 'OpenAI' },
  { value: 'gemini', label: 'Google Gemini' },
  { value: 'openrouter', label: 'OpenRouter' },
  { value: 'minimax', label: 'MiniMax' },
  { value: 'local', label: 'Local server (OpenAI-compatible or Ollama)' },
] as const;

export const MODEL_CHOICES = [
  { value: 'preset:default', label: 'Default preset' },
  { value: 'preset:fast', label: 'Fast preset' },
  { value: 'preset:local', label: 'Local preset' },
  { value: 'model', label: 'A specific model…' },
] as const;

export type ModelChoiceValue = (typeof MODEL_CHOICES)[number]['value'];

export type DraftModel = { preset: 'default' | 'fast' | 'local' } | { provider: string; model: string };

/** The `model` of POST workers/draft, or why the choice is incomplete (it names the field to fix). */
export function draftModel(choice: ModelChoiceValue, provider: string, model: string): { ok: true; model: DraftModel } | { ok: false; field: 'draft-model-name' | 'draft-provider'; message: string } {
  if (choice !== 'model') return { ok: true, model: { preset: choice.slice('preset:'.length) as 'default' | 'fast' | 'local' } };
  if (!DRAFT_PROVIDERS.some((entry) => entry.value === provider)) return { ok: false, field: 'draft-provider', message: 'Choose a provider.' };
  const name = model.trim();
  if (!name) return { ok: false, field: 'draft-model-name', message: 'Name the model, e.g. gpt-4.1 or qwen3-8b.' };
  if (name.length > 200) return { ok: false, field: 'draft-model-name', message: 'A model name has at most 200 characters.' };
  return { ok: true, model: { provider, model: name } };
}
