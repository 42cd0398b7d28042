import type { ApiClient } from './api-client';
import type { DocumentSource } from './documents';

/** What every command gets once the global options are resolved. */
export interface CommandContext {
  client: ApiClient;
  documents: DocumentSource;
  /** Prints `lines` for people, or `machine` as JSON with --json. */
  report(lines: string[], machine: unknown): void;
}
