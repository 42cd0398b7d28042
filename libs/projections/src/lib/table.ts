/**
 * Tables of a projection, described once: the migration, a rebuild's shadow schema and the
 * appliers all work from these descriptions, so the live and rebuilt tables cannot differ.
 */
// No `date`: pg reads it as a local-midnight Date; days are ISO text (YYYY-MM-DD).
export type ColumnType = 'text' | 'integer' | 'bigint' | 'double precision' | 'boolean' | 'timestamptz' | 'jsonb';

export interface ColumnSpec {
  name: string;
  type: ColumnType;
  nullable?: boolean;
}

export interface TableSpec {
  name: string;
  columns: readonly ColumnSpec[];
  primaryKey: readonly string[];
  indexes?: readonly (readonly string[])[];
}

/** A row as the pure projection code sees it: numbers as numbers, instants as ISO strings. */
export type Row = Record<string, unknown>;

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/** Schema and table names are interpolated into SQL, so only plain lower-case identifiers pass. */
export function identifier(name: string): string {
  if (!IDENTIFIER.test(name)) throw new Error(`"${name}" is not a plain SQL identifier`);
  return name;
}

export function qualified(schema: string, table: string): string {
  return `${identifier(schema)}.${identifier(table)}`;
}

/** CREATE TABLE and CREATE INDEX statements of one table in `schema`. */
export function tableDdl(schema: string, table: TableSpec): string[] {
  const columns = table.columns.map((column) => `  ${identifier(column.name)} ${column.type}${column.nullable ? '' : ' NOT NULL'}`);
  const statements = [
    `CREATE TABLE ${qualified(schema, table.name)} (\n${columns.join(',\n')},\n  PRIMARY KEY (${table.primaryKey.map(identifier).join(', ')})\n)`,
  ];
  for (const index of table.indexes ?? []) {
    statements.push(`CREATE INDEX ${identifier(`${table.name}_${index.join('_')}`)} ON ${qualified(schema, table.name)} (${index.map(identifier).join(', ')})`);
  }
  return statements;
}

/** Turns a row read by `pg` into the pure form: bigint text to number, instants to ISO strings. */
export function fromDatabase(table: TableSpec, raw: Record<string, unknown>): Row {
  const row: Row = {};
  for (const column of table.columns) {
    const value = raw[column.name];
    if (value === null || value === undefined) row[column.name] = null;
    else if (column.type === 'bigint') row[column.name] = Number(value);
    else if (column.type === 'timestamptz') row[column.name] = (value as Date).toISOString();
    else row[column.name] = value;
  }
  return row;
}

/** The parameter `pg` should send for a column: JSON text for jsonb (arrays would become SQL arrays). */
export function toDatabase(column: ColumnSpec, value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (column.type === 'jsonb') return JSON.stringify(value);
  return value;
}
