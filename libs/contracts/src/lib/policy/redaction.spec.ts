import { redactJson, redactResource } from './redaction';

describe(redactResource.name, () => {
  it.each([
    ['https://user:s3cret@ci.example.com/builds?token=abc&x=1', 'https://ci.example.com/builds?token=***&x=***'],
    ['https://ci.example.com/a#access_token=abc', 'https://ci.example.com/a#***'],
    ['https://a@b@ci.example.com', 'https://ci.example.com'],
    ['https://ci.example.com?flag', 'https://ci.example.com?flag=***'],
    ['git clone https://x:tok@github.com/o/r.git', 'git clone https://github.com/o/r.git'],
    ['reports/2024/summary.md', 'reports/2024/summary.md'],
  ])('records %s as %s', (input, expected) => {
    expect(redactResource(input)).toBe(expected);
  });

  it('redacts strings nested in an argument document when they hold URLs', () => {
    expect(redactJson({ url: 'https://u:p@h.example.com/?k=v', n: 1, list: ['https://h.example.com/?a=b'] })).toEqual({
      url: 'https://h.example.com/?k=***',
      n: 1,
      list: ['https://h.example.com/?a=***'],
    });
  });
});
