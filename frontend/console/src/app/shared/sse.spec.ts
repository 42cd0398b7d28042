import { SseParser } from './sse';

describe(SseParser.name, () => {
  it('dispatches a message with its id and event name when a blank line ends it', () => {
    const sut = new SseParser();
    expect(sut.push('id: 7\nevent: run.started\ndata: {"a":1}\n\n')).toEqual([{ id: '7', event: 'run.started', data: '{"a":1}' }]);
  });

  it('joins a message split across chunks, including inside a CRLF', () => {
    const sut = new SseParser();
    expect(sut.push('id: 8\r')).toEqual([]);
    expect(sut.push('\nevent: x\r\ndata: he')).toEqual([]);
    expect(sut.push('llo\r\n\r\n')).toEqual([{ id: '8', event: 'x', data: 'hello' }]);
  });

  it('ignores heartbeat comments and keeps the last id for messages without one', () => {
    const sut = new SseParser();
    expect(sut.push(': heartbeat\n\nid: 3\ndata: a\n\n: heartbeat\n\ndata: b\n\n')).toEqual([
      { id: '3', event: 'message', data: 'a' },
      { id: '3', event: 'message', data: 'b' },
    ]);
  });

  it('joins multi-line data with newlines', () => {
    expect(new SseParser().push('data: one\ndata: two\n\n')).toEqual([{ id: null, event: 'message', data: 'one\ntwo' }]);
  });
});
