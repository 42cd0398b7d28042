import type { INestApplication } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import type { OpenAPIObject } from '@nestjs/swagger';
import { z } from 'zod';

/**
 * zod writes a nullable field with no constraint (`z.string().nullable()`, and any union of bare
 * types) as a JSON Schema type list, `type: ['string', 'null']`. nestjs-zod hands each top-level
 * property of a DTO to @nestjs/swagger as property metadata, and swagger reads a list in `type` as
 * its own `type: [String]` notation: an array of the first type, the rest lost. The marker
 * nestjs-zod leaves on such a property (`type` was not a single string) tells it apart from a real
 * array; the list itself is read back from the DTO's schema.
 */
const EMPTY_TYPE_MARKER = 'x-nestjs_zod-empty-type';
const OUTPUT_SUFFIX = '_Output';

interface ZodDtoClass {
  name: string;
  schema: z.ZodType;
  isZodDto: true;
}

type JsonSchema = { type?: unknown; properties?: Record<string, JsonSchema>; items?: unknown; [key: string]: unknown };

function isZodDto(value: unknown): value is ZodDtoClass {
  return typeof value === 'function' && (value as Partial<ZodDtoClass>).isZodDto === true && '_zod' in ((value as Partial<ZodDtoClass>).schema ?? {});
}

/** Every zod DTO a controller names: in its responses, bodies, queries and parameters, and extra models. */
function zodDtosOf(app: INestApplication): Map<string, ZodDtoClass> {
  const found = new Map<string, ZodDtoClass>();
  const visit = (value: unknown, depth: number): void => {
    if (isZodDto(value)) {
      found.set(value.name, value);
      return;
    }
    if (depth === 0 || value === null || typeof value !== 'object') return;
    for (const inner of Object.values(value)) visit(inner, depth - 1);
  };
  const metadataOf = (target: object, key?: string | symbol) =>
    (key === undefined ? Reflect.getMetadataKeys(target) : Reflect.getMetadataKeys(target, key)).map((name: unknown) =>
      key === undefined ? Reflect.getMetadata(name, target) : Reflect.getMetadata(name, target, key),
    );
  for (const module of app.get(ModulesContainer).values()) {
    for (const { metatype } of module.controllers.values()) {
      if (typeof metatype !== 'function') continue;
      visit(metadataOf(metatype), 3);
      const prototype = metatype.prototype as Record<string, unknown>;
      for (const name of Object.getOwnPropertyNames(prototype)) {
        const handler = prototype[name];
        if (name === 'constructor' || typeof handler !== 'function') continue;
        visit(metadataOf(handler), 4);
        visit(metadataOf(prototype, name), 3);
      }
    }
  }
  return found;
}

/** The properties of a DTO's schema as nestjs-zod sees them: a schema that is not an object is wrapped as `root`. */
function propertiesOf(dto: ZodDtoClass, io: 'input' | 'output'): Record<string, JsonSchema> {
  const json = z.toJSONSchema(dto.schema, { io }) as JsonSchema;
  return json.type === 'object' && json.properties && Object.keys(json.properties).length > 0 ? json.properties : { root: json };
}

/** Puts back the type lists swagger folded into arrays. Runs on the document before cleanupOpenApiDoc, while the markers are there. */
export function restoreZodTypeLists(app: INestApplication, document: OpenAPIObject): void {
  const dtos = zodDtosOf(app);
  for (const [name, component] of Object.entries(document.components?.schemas ?? {})) {
    const properties = (component as JsonSchema).properties;
    if (!properties) continue;
    const folded = Object.entries(properties).filter(([, property]) => property[EMPTY_TYPE_MARKER] === true && property.type === 'array');
    if (folded.length === 0) continue;
    const output = name.endsWith(OUTPUT_SUFFIX);
    const dto = dtos.get(name) ?? (output ? dtos.get(name.slice(0, -OUTPUT_SUFFIX.length)) : undefined);
    if (!dto) throw new Error(`OpenAPI: no zod DTO named ${name} to read the types of ${folded.map(([key]) => key).join(', ')} from`);
    const original = propertiesOf(dto, output ? 'output' : 'input');
    for (const [key, property] of folded) {
      const types = original[key]?.type;
      if (!Array.isArray(types)) continue;
      property.type = types;
      delete property.items;
    }
  }
}
