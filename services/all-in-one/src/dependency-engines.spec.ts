import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { minVersion, satisfies } from 'semver';

const ROOT = join(__dirname, '../../..');

/** Every installed package directory, nested ones included. */
function packages(dir: string, found: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name.startsWith('.')) continue;
    const path = join(dir, name);
    if (name.startsWith('@')) {
      packages(path, found);
      continue;
    }
    if (existsSync(join(path, 'package.json'))) found.push(path);
    if (existsSync(join(path, 'node_modules'))) packages(join(path, 'node_modules'), found);
  }
  return found;
}

describe('installed dependencies', () => {
  it('all run on the oldest Node version package.json promises', () => {
    const declared = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
    const oldest = minVersion(declared)!.version;
    const refusing = packages(join(ROOT, 'node_modules')).flatMap((path) => {
      const manifest = JSON.parse(readFileSync(join(path, 'package.json'), 'utf8')) as { name?: string; version?: string; engines?: { node?: unknown } };
      const wanted = manifest.engines?.node;
      return typeof wanted === 'string' && !satisfies(oldest, wanted) ? [`${manifest.name}@${manifest.version} wants node ${wanted}`] : [];
    });
    expect(refusing).toEqual([]);
  });
});
