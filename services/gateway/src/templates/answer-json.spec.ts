import { jsonFromAnswer } from './answer-json';

describe(jsonFromAnswer.name, () => {
  it('reads a bare object, a fenced one and one wrapped in prose', () => {
    expect(jsonFromAnswer('{"a":1}')).toEqual({ ok: true, value: { a: 1 } });
    expect(jsonFromAnswer('Here:\n```json\n{"a":2}\n```\nDone.')).toEqual({ ok: true, value: { a: 2 } });
    expect(jsonFromAnswer('The definition is {"a":3} as asked.')).toEqual({ ok: true, value: { a: 3 } });
  });

  it('says so when there is no object', () => {
    expect(jsonFromAnswer('I cannot help with that.')).toEqual({ ok: false, message: 'the model did not answer a JSON object' });
    expect(jsonFromAnswer('[1, 2]')).toEqual({ ok: false, message: 'the model did not answer a JSON object' });
    expect(jsonFromAnswer('   ')).toEqual({ ok: false, message: 'the model answered nothing' });
  });
});
