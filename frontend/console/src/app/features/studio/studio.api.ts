/** Shapes of the gateway's templates, drafts, readiness and apply answers the studio reads. */

export type MissingKind = 'credential' | 'provider' | 'tool' | 'computer';

export interface MissingItem {
  kind: MissingKind;
  name: string;
  reason: string;
}

export interface Readiness {
  ready: boolean;
  missing: MissingItem[];
}

export interface TemplateSummary {
  id: string;
  version: number;
  title: string;
  category: string;
  /** Cron expression, or null when started on demand. */
  schedule: string | null;
  summary: string;
  tools: string[];
  credentials: string[];
}

export interface TemplateDetail extends TemplateSummary {
  /** The definition as shipped: YAML with its comments. */
  definition: string;
  demo: { tools: string[]; input: unknown };
  readiness: Readiness;
}

export interface Instantiated {
  workerId: string;
  workerName: string;
  version: number;
  digest: string;
  template: { id: string; version: number };
  demo: boolean;
  exampleInput: unknown;
  readiness: Readiness;
}

export type Drafter =
  | { kind: 'model'; provider: string; model: string; structuredOutput: 'native' | 'prompt'; costUsd: number; usage: { inputTokens: number; outputTokens: number } }
  | { kind: 'builder'; label: string; template: { id: string; title: string }; reason: string };

export interface WorkerDraft {
  drafter: Drafter;
  source: string;
  valid: boolean;
  errors: Array<{ path: string; message: string }>;
  removedGrants: Array<{ tool: string; reason: string }>;
  notes: string[];
  readiness: Readiness | null;
}

export interface DefinitionReadiness {
  name: string;
  readiness: Readiness;
}

export interface Applied {
  workerId: string;
  workerCreated: boolean;
  version: number;
  digest: string;
  created: boolean;
}

export interface DeploymentCreated {
  id: string;
  workerId: string;
  version: number;
  readiness?: Readiness;
}

/** A worker version the studio just made, ready to deploy and run. */
export interface MadeWorker {
  workerId: string;
  workerName: string;
  version: number;
  readiness: Readiness | null;
  /** Input to prefill the first run with (a template's example); null when there is none. */
  exampleInput: unknown;
  /** What was made, for the status line: "Created demo worker", "Saved as version 2"... */
  summary: string;
}
