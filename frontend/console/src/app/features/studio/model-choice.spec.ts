import { draftModel } from './model-choice';

describe(draftModel.name, () => {
  it('sends a preset as a preset', () => {
    expect(draftModel('preset:default', '', '')).toEqual({ ok: true, model: { preset: 'default' } });
    expect(draftModel('preset:local', 'openai', 'ignored')).toEqual({ ok: true, model: { preset: 'local' } });
  });

  it('sends a specific model with its provider, trimmed', () => {
    expect(draftModel('model', 'local', '  qwen3-8b ')).toEqual({ ok: true, model: { provider: 'local', model: 'qwen3-8b' } });
  });

  it('names the field to fix when a specific model is incomplete', () => {
    expect(draftModel('model', '', 'gpt-4.1')).toMatchObject({ ok: false, field: 'draft-provider' });
    expect(draftModel('model', 'nobody', 'gpt-4.1')).toMatchObject({ ok: false, field: 'draft-provider' });
    expect(draftModel('model', 'openai', '   ')).toMatchObject({ ok: false, field: 'draft-model-name' });
    expect(draftModel('model', 'openai', 'x'.repeat(201))).toMatchObject({ ok: false, field: 'draft-model-name' });
  });
});
