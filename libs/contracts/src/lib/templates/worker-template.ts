import type { JsonObject } from '../json';
import type { ToolName } from '../worker-definition/known-tools';

export const TEMPLATE_CATEGORIES = ['Support', 'Operations', 'Release', 'Comms', 'Research'] as const;
export type TemplateCategory = (typeof TEMPLATE_CATEGORIES)[number];

/** Scripted demos of templates are named `template-<id>`: a name no scripts directory can shadow. */
export const TEMPLATE_SCRIPT_PREFIX = 'template-';

/**
 * A starter worker shipped with the product: its definition as written (YAML, comments kept),
 * and a scripted demo that runs it without a model key.
 */
export interface WorkerTemplate {
  /** Also the worker name the definition carries until instantiated under another. */
  readonly id: string;
  /** Bumped whenever the definition or its demo changes. */
  readonly version: number;
  readonly title: string;
  readonly category: TemplateCategory;
  /** The cron expression of its schedule, or null for a worker started on demand. */
  readonly schedule: string | null;
  readonly summary: string;
  /** Words a description of a worker like this one would use; the builder ranks templates by them. */
  readonly keywords: readonly string[];
  /** The definition (packetagent/v1 YAML), with `model: { preset: default }`. */
  readonly definition: string;
  readonly demo: TemplateDemo;
}

export interface TemplateDemo {
  /** The grants the demo keeps: those that need no credential and no outside service. */
  readonly tools: readonly ToolName[];
  /** Turns the scripted provider replays (the scripted provider's script format). */
  readonly script: JsonObject;
  /** Input to start the demo run with; it matches the definition's input schema. */
  readonly input: JsonObject;
}
