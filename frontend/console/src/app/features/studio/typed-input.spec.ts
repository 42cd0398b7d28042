import { definitionContentType, parseRunInput } from './typed-input';

describe(definitionContentType.name, () => {
  it('sends a document that opens with a brace as JSON and anything else as YAML', () => {
    expect(definitionContentType('  {"apiVersion": "packetagent/v1"}')).toBe('application/json');
    expect(definitionContentType('# comment\napiVersion: packetagent/v1')).toBe('application/yaml');
  });
});

describe(parseRunInput.name, () => {
  it('reads JSON, and an empty input as an empty object', () => {
    expect(parseRunInput('{"url": "https://arxiv.org/abs/1"}')).toEqual({ ok: true, value: { url: 'https://arxiv.org/abs/1' } });
    expect(parseRunInput('  ')).toEqual({ ok: true, value: {} });
  });

  it('says why an input is not JSON', () => {
    expect(parseRunInput('{url: 1}')).toMatchObject({ ok: false, message: expect.stringMatching(/^The run input is not JSON: /) });
  });
});
