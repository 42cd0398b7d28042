import { parseToolArguments, toolCallFromValue } from './tool-arguments';

describe(parseToolArguments.name, () => {
  it('reads a JSON object, and empty text as no arguments', () => {
    expect(parseToolArguments('{"a":1,"b":{"c":[true]}}')).toEqual({ arguments: { a: 1, b: { c: [true] } } });
    expect(parseToolArguments('  ')).toEqual({ arguments: {} });
  });

  it.each([
    ['{"a":', 'arguments are not valid JSON'],
    ['[1,2]', 'arguments must be a JSON object, got an array'],
    ['"text"', 'arguments must be a JSON object, got a string'],
    ['42', 'arguments must be a JSON object, got a number'],
    ['null', 'arguments must be a JSON object, got null'],
  ])('returns null arguments with the reason for %j', (raw, reason) => {
    const parsed = parseToolArguments(raw);

    expect(parsed.arguments).toBeNull();
    expect(parsed.malformed).toContain(reason);
  });
});

describe(toolCallFromValue.name, () => {
  it('takes decoded objects as they are and reads strings as argument text', () => {
    expect(toolCallFromValue('1', 't', { a: 1 })).toEqual({ id: '1', name: 't', arguments: { a: 1 }, rawArguments: '{"a":1}' });
    expect(toolCallFromValue('2', 't', '{"a":2}')).toEqual({ id: '2', name: 't', arguments: { a: 2 }, rawArguments: '{"a":2}' });
    expect(toolCallFromValue('3', 't', undefined)).toEqual({ id: '3', name: 't', arguments: {}, rawArguments: '{}' });
    expect(toolCallFromValue('4', 't', [1])).toMatchObject({ arguments: null, rawArguments: '[1]', malformed: expect.stringContaining('array') });
  });
});
