// A stand-in for a Slack incoming webhook: prints every JSON body posted to it and answers
// "ok" as Slack does. Usage: node examples/webhook-sink.mjs [port]   (default 8486)
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? 8486);
createServer((request, response) => {
  let body = '';
  request.setEncoding('utf8');
  request.on('data', (chunk) => (body += chunk));
  request.on('end', () => {
    process.stdout.write(`${new Date().toISOString()} ${request.method} ${request.url} ${body}\n`);
    response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
}).listen(port, '127.0.0.1', () => process.stdout.write(`webhook sink listening on http://127.0.0.1:${port}/\n`));
