import { canonicalJson, sha256Hex, type JsonValue } from '../json';
import type { WorkerDefinition } from './schema';
import { mcpServerCredential } from '../sandbox/mcp.v1';

/**
 * The canonical form of a parsed definition (RFC 8785 JSON, defaults applied, resources
 * normalised) and its SHA-256 digest: two sources with the same meaning, whatever their format,
 * key order or layout, give the same digest.
 */
export function canonicalDefinition(def: WorkerDefinition): { canonical: string; digest: string } {
  const canonical = canonicalJson(def as unknown as JsonValue);
  return { canonical, digest: sha256Hex(canonical) };
}

/** Every credential name a definition refers to (tool grants, notification routes and MCP servers), sorted. */
export function credentialsOf(def: WorkerDefinition): string[] {
  const names = new Set<string>();
  for (const grant of def.tools) for (const name of grant.credentials) names.add(name);
  for (const route of def.notifications) if (route.credential !== undefined) names.add(route.credential);
  for (const server of def.mcp ?? []) {
    const credential = mcpServerCredential(server);
    if (credential !== undefined) names.add(credential);
  }
  return [...names].sort();
}
