import { SseParser } from './sse';

describe(SseParser.name, () => {
  it('dispatches each block with its id, event and data, and skips comments', () => {
    const parser = new SseParser();

    const messages = parser.push('retry: 2000\n: connected\n\nid: 7\nevent: run.admitted\ndata: {"a":1}\n\n: heartbeat\n\nevent: closing\ndata: {"reason":"shutting_down"}\n\n');

    expect(messages).toEqual([
      { id: '7', event: 'run.admitted', data: '{"a":1}' },
      { event: 'closing', data: '{"reason":"shutting_down"}' },
    ]);
    expect(parser.retryMs).toBe(2000);
  });

  it('reassembles messages cut anywhere, across CRLF, CR and LF line ends', () => {
    const text = 'id: 1\r\nevent: a\r\ndata: one\r\n\r\nid: 2\rdata: two\r\rdata: line 1\ndata: line 2\n\n';
    const parser = new SseParser();

    const messages = [...text].flatMap((character) => parser.push(character));

    expect(messages).toEqual([
      { id: '1', event: 'a', data: 'one' },
      { id: '2', event: 'message', data: 'two' },
      { event: 'message', data: 'line 1\nline 2' },
    ]);
  });

  it('holds back a block until its blank line arrives, and ignores a retry that is not a number', () => {
    const parser = new SseParser();

    expect(parser.push('retry: soon\nid: 3\ndata: x\n')).toEqual([]);
    expect(parser.push('\n')).toEqual([{ id: '3', event: 'message', data: 'x' }]);
    expect(parser.retryMs).toBeNull();
  });
});
