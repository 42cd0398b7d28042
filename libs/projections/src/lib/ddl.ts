import type { Projection } from './projection';
import { qualified, tableDdl } from './table';

/** The table every schema of projections keeps its positions in. */
export function checkpointsDdl(schema: string): string {
  return `CREATE TABLE ${qualified(schema, 'checkpoints')} (
  projection text PRIMARY KEY,
  position bigint NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL DEFAULT now()
)`;
}

/** Every statement that creates the projections' tables in `schema` (the migration holds the same for `projector`). */
export function projectionDdl(schema: string, projections: readonly Projection[]): string[] {
  return projections.flatMap((projection) => projection.tables.flatMap((table) => tableDdl(schema, table)));
}
