import { join } from 'node:path';
import { buildSync } from 'esbuild';

/**
 * Bundles the stdio test server (SDK included) into one file in `dir`, since the sandbox sees no
 * node_modules: only /usr (node among it) and the workspace. Answers the file's name.
 */
export function bundleStdioServer(dir: string, name: string): string {
  buildSync({ entryPoints: [join(__dirname, 'stdio-server.fixture.ts')], bundle: true, platform: 'node', format: 'cjs', target: 'node20', outfile: join(dir, name), logLevel: 'silent' });
  return name;
}
