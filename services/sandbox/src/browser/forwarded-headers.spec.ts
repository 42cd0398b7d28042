import { forwardedRequestHeaders, fulfilledResponseHeaders } from './forwarded-headers';

describe(forwardedRequestHeaders.name, () => {
  it('drops hop-by-hop and framing headers and offers only the encodings Node decodes', () => {
    const sut = forwardedRequestHeaders({
      ':authority': 'example.com',
      Host: 'example.com',
      Connection: 'keep-alive',
      'Proxy-Authorization': 'Basic x',
      'Content-Length': '3',
      'Accept-Encoding': 'gzip, deflate, br, zstd',
      Cookie: 'a=1',
      'User-Agent': 'Chromium',
    });

    expect(sut).toEqual({ cookie: 'a=1', 'user-agent': 'Chromium', 'accept-encoding': 'gzip, deflate, br' });
  });
});

describe(fulfilledResponseHeaders.name, () => {
  it('drops the encoding and framing of the decoded body and joins Set-Cookie lines by newlines', () => {
    const sut = fulfilledResponseHeaders({
      'content-type': 'text/html',
      'content-encoding': 'gzip',
      'content-length': '10',
      'transfer-encoding': 'chunked',
      'set-cookie': ['a=1; Path=/', 'b=2'],
      vary: 'accept',
    });

    expect(sut).toEqual({ 'content-type': 'text/html', 'set-cookie': 'a=1; Path=/\nb=2', vary: 'accept' });
  });
});
