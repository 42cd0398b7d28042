import type { DecodedEvent } from '@packetagent/contracts';
import type { Row, TableSpec } from './table';

/** One row an event changes: `evolve` is pure, from the row as it is (or null) to what it becomes (null deletes). */
export interface RowChange {
  table: string;
  key: Row;
  evolve(current: Row | null): Row | null;
}

/**
 * A read model: its tables and, as pure code, what each event does to them. The live projector
 * and a rebuild run the same definition through the same applier.
 */
export interface Projection {
  name: string;
  tables: readonly TableSpec[];
  /** The rows the event changes, in order; none when the event is not this projection's. */
  changes(event: DecodedEvent): RowChange[];
}

/** The id after `<category>-` in a stream name. */
export function streamId(stream: string): string {
  const dash = stream.indexOf('-');
  return dash < 0 ? stream : stream.slice(dash + 1);
}

export function streamCategoryOf(stream: string): string {
  const dash = stream.indexOf('-');
  return dash < 0 ? stream : stream.slice(0, dash);
}

/** A change that creates the row once and leaves it as it is afterwards (replays change nothing). */
export function insertOnce(table: string, key: Row, row: Row): RowChange {
  return { table, key, evolve: (current) => current ?? row };
}

/** A change to an existing row only: an event about a row never created changes nothing. */
export function updateExisting(table: string, key: Row, update: (current: Row) => Row): RowChange {
  return { table, key, evolve: (current) => (current ? update(current) : null) };
}
