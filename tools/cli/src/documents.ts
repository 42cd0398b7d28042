import { readFile } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { UsageError } from './errors';
import { yamlSentence } from './messages';

export type DocumentFormat = 'yaml' | 'json';

export interface LoadedDocument {
  /** The file as written: definitions are sent verbatim so the server reports its own line numbers. */
  text: string;
  format: DocumentFormat;
  value: unknown;
  /** How to name the document in messages. */
  label: string;
}

export interface DocumentSource {
  cwd: string;
  readStdin(): Promise<string>;
}

/** By extension; otherwise by content, since JSON documents start with `{` or `[` and YAML ones rarely do. */
export function formatOf(path: string, text: string): DocumentFormat {
  const extension = extname(path).toLowerCase();
  if (extension === '.json') return 'json';
  if (extension === '.yaml' || extension === '.yml') return 'yaml';
  return /^\s*[[{]/.test(text) ? 'json' : 'yaml';
}

export function parseDocument(text: string, format: DocumentFormat, label: string): unknown {
  try {
    // Only the CLI reads this copy; the server parses the original text with its own limits.
    return format === 'json' ? JSON.parse(text) : parseYaml(text, { maxAliasCount: 50 });
  } catch (error) {
    if (error instanceof YAMLParseError) {
      const at = error.linePos?.[0];
      throw new UsageError(`${label}${at ? `:${at.line}:${at.col}` : ''}: not valid YAML: ${yamlSentence(error.message)}`);
    }
    throw new UsageError(`${label}: not valid ${format === 'json' ? 'JSON' : 'YAML'}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Reads a YAML or JSON file, or standard input for `-`. */
export async function loadDocument(path: string, source: DocumentSource): Promise<LoadedDocument> {
  let text: string;
  let label: string;
  if (path === '-') {
    label = '(stdin)';
    text = await source.readStdin();
  } else {
    label = path;
    try {
      text = await readFile(resolve(source.cwd, path), 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new UsageError(`cannot read ${path}: ${code === 'ENOENT' ? 'no such file' : error instanceof Error ? error.message : String(error)}`);
    }
  }
  const format = formatOf(path, text);
  return { text, format, value: parseDocument(text, format, label), label };
}
