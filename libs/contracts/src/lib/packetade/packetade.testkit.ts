import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse } from 'yaml';
import { ValidationError } from '../errors';
import type { JsonObject } from '../json';
import type { PackageProvenance } from './worker-package.v1';

// Fixtures shared by the PacketADE specs.

const EXAMPLE = resolve(__dirname, '../../../../../examples/release-audit.worker.yaml');

/** examples/release-audit.worker.yaml as a JSON object: the definition as its author wrote it. */
export function exampleDefinitionSource(): JsonObject {
  return parse(readFileSync(EXAMPLE, 'utf8')) as JsonObject;
}

export function exampleProvenance(): PackageProvenance {
  return {
    source: { repository: 'https://git.example.com/ops/workers.git', commit: '3f2a9c1d0b7e', path: 'workers/release-audit.worker.yaml' },
    builtBy: 'packetade 0.4.1',
    builtAt: '2026-03-02T10:15:00Z',
  };
}

export interface KeyPair {
  publicKey: KeyObject;
  privateKey: KeyObject;
}

export function ed25519(): KeyPair {
  return generateKeyPairSync('ed25519');
}

/** The error `act` throws; fails the spec when it throws nothing or something else than a ValidationError. */
export function refusal(act: () => unknown): ValidationError {
  try {
    act();
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
  throw new Error('expected a refusal, but the call succeeded');
}
