import { z } from 'zod';
import type { ValidationIssue } from '../errors';
import { canonicalJson, isJsonObject, jsonIssues, sha256Hex, type JsonObject, type JsonValue } from '../json';
import { credentialsOf } from '../worker-definition/canonical';
import { DefinitionError } from '../worker-definition/errors';
import { definitionErrorMap, toValidationIssues } from '../worker-definition/issues';
import { validateWorkerDefinition } from '../worker-definition/parse';
import type { WorkerDefinition } from '../worker-definition/schema';
import { strict } from '../worker-definition/schema-kit';
import { PackageInvalidError, PackageUnsupportedVersionError } from './errors';
import { Rfc3339DateTime } from './fields';
import { prefixIssue } from './json-document';

// A worker package: a worker definition as its author wrote it, where it was built from, and
// what it needs from the server it is deployed to. PacketADE builds and signs packages; the
// gateway reads them (see document.ts for the bytes and dsse.ts for the envelope).

export const WORKER_PACKAGE_API_VERSION = 'packetagent/v1';
export const WORKER_PACKAGE_KIND = 'WorkerPackage';
/** The DSSE payloadType of a signed worker package. */
export const WORKER_PACKAGE_PAYLOAD_TYPE = 'application/vnd.packetagent.worker-package+json';

/** Most entries of each `requires` list. */
export const MAX_PACKAGE_REQUIREMENTS = 64;

const INVALID = 'invalid worker package';
const OTHER_VERSION = /^packetagent\/v\d+$/;

const unsupportedVersion = (input: unknown) => `unsupported apiVersion ${JSON.stringify(input)} (this server reads ${WORKER_PACKAGE_API_VERSION})`;

const ApiVersionSchema = z.literal(WORKER_PACKAGE_API_VERSION, {
  error: (issue) => {
    if (issue.input === undefined) return 'required';
    return typeof issue.input === 'string' && OTHER_VERSION.test(issue.input) ? unsupportedVersion(issue.input) : `must be "${WORKER_PACKAGE_API_VERSION}"`;
  },
});

/** The definition is checked apart, by validateWorkerDefinition, so its issues keep their own wording. */
export const PackageWorkerSchema = z
  .record(z.string(), z.unknown())
  .meta({ description: 'The worker definition (packetagent/v1 Worker) as its author wrote it; validated as a worker definition, not by this schema.' });

const RelativePath = z
  .string()
  .min(1)
  .max(500)
  .refine((path) => !path.startsWith('/') && !path.split(/[\\/]/).includes('..'), {
    error: 'must be a relative path inside the repository: no leading "/" and no ".." segment',
  })
  .meta({ description: 'The definition file, relative to the repository root: no leading "/" and no ".." segment.' });

export const PackageProvenanceSchema = strict({
  source: strict({
    repository: z.string().min(1).max(500).meta({ description: 'Where the source is kept, for instance its clone URL.' }),
    commit: z.string().regex(/^[0-9a-f]{7,64}$/, { error: 'must be a commit id: 7 to 64 lower-case hexadecimal digits' }),
    path: RelativePath,
  }),
  builtBy: z.string().min(1).max(200).meta({ description: 'The tool that built the package, with its version.' }),
  builtAt: Rfc3339DateTime,
});

const RequirementList = z
  .array(z.string().min(1).max(200))
  .max(MAX_PACKAGE_REQUIREMENTS)
  .superRefine((items, ctx) => {
    const seen = new Map<string, number>();
    items.forEach((item, index) => {
      const first = seen.get(item);
      if (first === undefined) seen.set(item, index);
      else ctx.addIssue({ code: 'custom', path: [index], message: `duplicate of [${first}] "${item}"` });
    });
  })
  .meta({ uniqueItems: true });

export const PackageRequirementsSchema = strict({
  providers: RequirementList.meta({ description: 'Model providers the worker needs: a provider name, or preset:<name> for a preset.' }),
  tools: RequirementList.meta({ description: 'Tools the worker is granted, as its definition stores them (an MCP tool grant is "mcp").' }),
  credentials: RequirementList.meta({ description: 'Credential names the worker refers to.' }),
});

export const WorkerPackageSchema = strict({
  apiVersion: ApiVersionSchema,
  kind: z.literal(WORKER_PACKAGE_KIND, { error: (issue) => (issue.input === undefined ? 'required' : `must be "${WORKER_PACKAGE_KIND}"`) }),
  worker: PackageWorkerSchema,
  provenance: PackageProvenanceSchema,
  requires: PackageRequirementsSchema,
});

export type PackageProvenance = z.output<typeof PackageProvenanceSchema>;
export type PackageRequirements = z.output<typeof PackageRequirementsSchema>;
export interface WorkerPackage {
  apiVersion: typeof WORKER_PACKAGE_API_VERSION;
  kind: typeof WORKER_PACKAGE_KIND;
  /** The definition as written (a JSON object); `ParsedWorkerPackage.definition` is its validated form. */
  worker: JsonObject;
  provenance: PackageProvenance;
  requires: PackageRequirements;
}

export interface ParsedWorkerPackage {
  /** The package as given. */
  package: WorkerPackage;
  /** Its worker, validated: defaults applied, resources normalised. */
  definition: WorkerDefinition;
  /** RFC 8785 form of the package as given: the bytes a signature covers. */
  canonical: string;
  /** SHA-256 (hex) of `canonical`. */
  digest: string;
}

/**
 * What a definition needs from the server it runs on, each list sorted and without duplicates:
 * the model provider (`preset:<name>` for a preset), the tools granted (an MCP grant, however
 * written, is stored as tool `mcp`) and every credential it names.
 */
export function derivePackageRequirements(definition: WorkerDefinition): PackageRequirements {
  const model = definition.model;
  const provider = 'preset' in model ? `preset:${model.preset}` : model.provider;
  return {
    providers: [provider],
    tools: [...new Set(definition.tools.map((grant) => grant.tool))].sort(),
    credentials: credentialsOf(definition),
  };
}

/**
 * Validates a package that is a parsed JSON value. Throws PackageUnsupportedVersionError for
 * another `packetagent/vN`, and PackageInvalidError with every issue otherwise: the package's own
 * at their paths (`provenance.source.commit`), the definition's under `worker.`, and a
 * `requires` list that is not what the definition needs at `requires.<list>`.
 */
export function parseWorkerPackage(value: unknown): ParsedWorkerPackage {
  const structural = jsonIssues(value);
  if (structural.length > 0) throw new PackageInvalidError(INVALID, structural);
  if (isJsonObject(value)) {
    const apiVersion = value['apiVersion'];
    if (typeof apiVersion === 'string' && apiVersion !== WORKER_PACKAGE_API_VERSION && OTHER_VERSION.test(apiVersion)) {
      throw new PackageUnsupportedVersionError('unsupported worker package version', [{ path: 'apiVersion', message: unsupportedVersion(apiVersion) }]);
    }
  }
  const result = WorkerPackageSchema.safeParse(value, { error: definitionErrorMap });
  const issues: ValidationIssue[] = result.success ? [] : toValidationIssues(result.error.issues);
  const worker = isJsonObject(value) ? value['worker'] : undefined;
  const definition = isJsonObject(worker) ? definitionOf(worker, issues) : undefined;
  if (!result.success || definition === undefined) throw new PackageInvalidError(INVALID, issues);

  const pkg = result.data as WorkerPackage;
  issues.push(...requirementIssues(pkg.requires, derivePackageRequirements(definition)));
  if (issues.length > 0) throw new PackageInvalidError(INVALID, issues);
  const canonical = canonicalJson(value as JsonValue);
  return { package: pkg, definition, canonical, digest: sha256Hex(canonical) };
}

/**
 * A package of `definitionSource` (the definition as written, a JSON object) with `requires`
 * derived from it. Throws PackageInvalidError when the definition or the provenance is invalid.
 */
export function createWorkerPackage(definitionSource: JsonObject, provenance: PackageProvenance): WorkerPackage {
  const issues: ValidationIssue[] = [];
  const definition = definitionOf(definitionSource, issues);
  if (definition === undefined) throw new PackageInvalidError(INVALID, issues);
  const pkg: WorkerPackage = {
    apiVersion: WORKER_PACKAGE_API_VERSION,
    kind: WORKER_PACKAGE_KIND,
    worker: definitionSource,
    provenance,
    requires: derivePackageRequirements(definition),
  };
  // A copy, so that the caller's objects are not shared with the package; validated first, so
  // that a value JSON cannot hold is refused rather than converted by the copy.
  return JSON.parse(parseWorkerPackage(pkg).canonical) as WorkerPackage;
}

function definitionOf(worker: JsonObject, issues: ValidationIssue[]): WorkerDefinition | undefined {
  try {
    return validateWorkerDefinition(worker);
  } catch (error) {
    if (!(error instanceof DefinitionError)) throw error;
    issues.push(...error.issues.map((issue) => prefixIssue('worker', issue)));
    return undefined;
  }
}

const REQUIREMENT_NOUN: Record<keyof PackageRequirements, string> = {
  providers: 'provider',
  tools: 'tool',
  credentials: 'credential',
};

function requirementIssues(declared: PackageRequirements, derived: PackageRequirements): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  for (const list of Object.keys(REQUIREMENT_NOUN) as Array<keyof PackageRequirements>) {
    const want = derived[list];
    const have = declared[list];
    const missing = want.filter((item) => !have.includes(item));
    const extra = have.filter((item) => !want.includes(item));
    const parts: string[] = [];
    const quoted = (items: string[]) => items.map((item) => JSON.stringify(item)).join(', ');
    if (missing.length > 0) parts.push(`missing ${quoted(missing)}, which the worker uses`);
    if (extra.length > 0) parts.push(`lists ${quoted(extra)}, which the worker does not use`);
    if (parts.length === 0 && have.join('\n') !== want.join('\n')) parts.push(`must be sorted: ${quoted(want)}`);
    if (parts.length > 0) issues.push({ path: `requires.${list}`, message: `${parts.join('; ')} (each ${REQUIREMENT_NOUN[list]} the worker needs, sorted)` });
  }
  return issues;
}
