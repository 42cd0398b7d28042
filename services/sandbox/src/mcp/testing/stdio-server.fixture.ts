import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { testMcpServer } from './test-tools';

// Bundled into a run's workspace and started inside the sandbox as `node server.cjs <marker>`.
const server = testMcpServer({ echoTakesLanguage: false, counted: 0 }, (line) => process.stdout.write(`${line}\n`));
void server.connect(new StdioServerTransport());
