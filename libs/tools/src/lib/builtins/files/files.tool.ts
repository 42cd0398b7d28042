import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { chmod, open, readdir, rename, rm, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { JsonObject } from '@packetagent/contracts';
import fg from 'fast-glob';
import { z } from 'zod';
import { ToolFailure } from '../../errors';
import type { BuiltinTool } from '../../internal/builtin';
import { toParameters } from '../../internal/schema';
import { MODEL_TEXT_LIMIT, oneLine, redactBulk, truncateText } from '../../internal/text';
import { normaliseWorkspacePath, Workspace } from '../../workspace/workspace-path';
import type { ToolOutcome } from '../../tool.types';

/** Largest file read, edited or searched; larger files are refused rather than read in part. */
export const FILE_MAX_BYTES = 4 * 1024 * 1024;
/** Largest content one write sends. */
export const WRITE_MAX_CHARS = 1024 * 1024;
const LIST_MAX_ENTRIES = 1000;
const SEARCH_MAX_MATCHES = 200;
const SEARCH_MAX_FILES = 5000;
const SEARCH_LINE_CHARS = 300;

const OPS = ['read', 'write', 'list', 'delete', 'search', 'edit'] as const;
type FileOp = (typeof OPS)[number];
const VERB: Record<FileOp, string> = { read: 'read', write: 'write', list: 'list', delete: 'delete', search: 'read', edit: 'write' };
const ROOT_ALLOWED = new Set<FileOp>(['list', 'search']);
/** Which optional fields each operation uses; any other is a mistake worth telling the model about. */
const FIELDS: Record<FileOp, readonly string[]> = {
  read: ['offset'],
  write: ['content'],
  list: [],
  delete: [],
  search: ['pattern', 'glob'],
  edit: ['find', 'replace'],
};
const REQUIRED: Record<FileOp, readonly string[]> = { read: [], write: ['content'], list: [], delete: [], search: ['pattern'], edit: ['find', 'replace'] };

const ArgsSchema = z
  .strictObject({
    op: z.enum(OPS).describe('read a file, write (create or replace) a file, list a directory, delete a file or directory, search text in files under a directory, or edit a file by exact find/replace.'),
    path: z.string().describe('Path relative to the run workspace ("." for the workspace itself, for list and search).'),
    content: z.string().max(WRITE_MAX_CHARS).optional().describe('write: the whole new content of the file.'),
    pattern: z.string().min(1).max(500).optional().describe('search: the exact text to find (not a regular expression).'),
    glob: z.string().min(1).max(200).optional().describe('search: only files whose path under `path` matches this glob, e.g. "**/*.ts".'),
    find: z.string().min(1).max(WRITE_MAX_CHARS).optional().describe('edit: the exact text to replace; it must occur exactly once in the file.'),
    replace: z.string().max(WRITE_MAX_CHARS).optional().describe('edit: the text that replaces `find`.'),
    offset: z.number().int().min(0).optional().describe(`read: the character to start at, to continue a read cut at ${MODEL_TEXT_LIMIT} characters.`),
  })
  .superRefine((args, ctx) => {
    const checked = normaliseWorkspacePath(args.path, { allowRoot: ROOT_ALLOWED.has(args.op) });
    if (!checked.ok) ctx.addIssue({ code: 'custom', path: ['path'], message: checked.message });
    for (const field of REQUIRED[args.op]) {
      if (args[field as keyof typeof args] === undefined) ctx.addIssue({ code: 'custom', path: [field], message: `required for op "${args.op}"` });
    }
    for (const field of ['content', 'pattern', 'glob', 'find', 'replace', 'offset'] as const) {
      if (args[field] !== undefined && !FIELDS[args.op].includes(field)) ctx.addIssue({ code: 'custom', path: [field], message: `not used by op "${args.op}"` });
    }
    // Braces could expand to an absolute or ".." pattern, so only *, ** and ? are accepted.
    if (args.glob !== undefined && (args.glob.startsWith('/') || args.glob.includes('..') || /[\\{}]/.test(args.glob))) {
      ctx.addIssue({ code: 'custom', path: ['glob'], message: 'must stay under `path`: no leading "/", no "..", no braces, no backslash' });
    }
  });

export type FilesArgs = z.output<typeof ArgsSchema>;

function normalPath(args: FilesArgs): string {
  const checked = normaliseWorkspacePath(args.path, { allowRoot: ROOT_ALLOWED.has(args.op) });
  if (!checked.ok) throw new ToolFailure('path_invalid', checked.message);
  return checked.path;
}

function isBinary(bytes: Buffer): boolean {
  return bytes.subarray(0, 8192).includes(0);
}

/** Opens an existing regular file without following a symbolic link in its last component. */
async function openFile(absolute: string, shown: string, flags: number): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(absolute, flags | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new ToolFailure('not_found', `${shown} does not exist`);
    if (code === 'ELOOP') throw new ToolFailure('path_outside_workspace', `${shown} changed into a symbolic link`);
    if (code === 'EISDIR') throw new ToolFailure('is_a_directory', `${shown} is a directory`);
    throw error;
  }
  const info = await handle.stat();
  if (!info.isFile()) {
    await handle.close();
    throw new ToolFailure(info.isDirectory() ? 'is_a_directory' : 'not_a_file', `${shown} is not a regular file`);
  }
  if (info.size > FILE_MAX_BYTES) {
    await handle.close();
    throw new ToolFailure('file_too_large', `${shown} has ${info.size} bytes; files over ${FILE_MAX_BYTES} bytes are not read`);
  }
  return handle;
}

async function readText(absolute: string, shown: string): Promise<{ bytes: Buffer; mode: number }> {
  const handle = await openFile(absolute, shown, constants.O_RDONLY);
  try {
    const info = await handle.stat();
    return { bytes: await handle.readFile(), mode: info.mode & 0o777 };
  } finally {
    await handle.close();
  }
}

/**
 * Replaces `absolute` with `content` atomically: a new file is written next to it (never through
 * a link) and renamed over it, so a reader never sees half a file and a link is replaced, not
 * followed.
 */
async function writeAtomically(absolute: string, content: string, mode: number): Promise<void> {
  const temporary = join(dirname(absolute), `.${basename(absolute)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode);
  try {
    await handle.writeFile(content, 'utf8');
    await handle.sync();
  } catch (error) {
    await handle.close();
    await rm(temporary, { force: true });
    throw error;
  }
  await handle.close();
  await chmod(temporary, mode);
  try {
    await rename(temporary, absolute);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

function countOccurrences(text: string, find: string): number {
  let count = 0;
  for (let at = text.indexOf(find); at >= 0; at = text.indexOf(find, at + find.length)) count++;
  return count;
}

type Handler = (args: FilesArgs, path: string, workspace: Workspace) => Promise<ToolOutcome>;

const read: Handler = async (args, path, workspace) => {
  const resolved = await workspace.resolve(path, { createParents: false });
  if (!resolved.exists) throw new ToolFailure('not_found', `${path} does not exist`);
  const { bytes } = await readText(resolved.absolute, path);
  if (isBinary(bytes)) return { ok: true, output: { path, bytes: bytes.length, binary: true, content: null }, summary: `read ${path} (${bytes.length} bytes, binary)` };
  const text = bytes.toString('utf8');
  const offset = args.offset ?? 0;
  const { text: content, truncated } = truncateText(text.slice(offset));
  const output: JsonObject = { path, bytes: bytes.length, chars: text.length, offset, content, truncated };
  if (truncated) output['nextOffset'] = offset + content.length;
  return { ok: true, output, summary: `read ${path} (${bytes.length} bytes)` };
};

const write: Handler = async (args, path, workspace) => {
  const resolved = await workspace.resolve(path, { createParents: true });
  let mode = 0o644;
  if (resolved.exists) {
    const existing = await openFile(resolved.absolute, path, constants.O_RDONLY);
    mode = (await existing.stat()).mode & 0o777;
    await existing.close();
  }
  await writeAtomically(resolved.absolute, args.content!, mode);
  const bytes = Buffer.byteLength(args.content!, 'utf8');
  return { ok: true, output: { path, bytes, created: !resolved.exists }, summary: `${resolved.exists ? 'replaced' : 'created'} ${path} (${bytes} bytes)` };
};

const edit: Handler = async (args, path, workspace) => {
  const resolved = await workspace.resolve(path, { createParents: false });
  if (!resolved.exists) throw new ToolFailure('not_found', `${path} does not exist`);
  const { bytes, mode } = await readText(resolved.absolute, path);
  if (isBinary(bytes)) throw new ToolFailure('not_a_text_file', `${path} is a binary file`);
  const text = bytes.toString('utf8');
  const find = args.find!;
  const count = countOccurrences(text, find);
  if (count === 0) throw new ToolFailure('find_not_found', `the text to find does not occur in ${path}`);
  if (count > 1) throw new ToolFailure('find_ambiguous', `the text to find occurs ${count} times in ${path}; include more context so it occurs once`);
  const at = text.indexOf(find);
  // Spliced by index: String.replace would interpret `$&` and friends in the replacement.
  const updated = `${text.slice(0, at)}${args.replace!}${text.slice(at + find.length)}`;
  await writeAtomically(resolved.absolute, updated, mode);
  const line = text.slice(0, at).split('\n').length;
  return { ok: true, output: { path, line, bytes: Buffer.byteLength(updated, 'utf8') }, summary: `edited ${path} at line ${line}` };
};

const remove: Handler = async (_args, path, workspace) => {
  let resolved;
  try {
    resolved = await workspace.resolve(path, { createParents: false });
  } catch (error) {
    if (error instanceof ToolFailure && error.code === 'not_found') resolved = null;
    else throw error;
  }
  // Deleting what is already gone succeeds, so a repeated delete (same key) is harmless.
  if (!resolved?.exists) return { ok: true, output: { path, deleted: false, existed: false }, summary: `${path} was already absent` };
  if (resolved.symlink) await unlink(resolved.entry);
  else await rm(resolved.entry, { recursive: true, force: true });
  return { ok: true, output: { path, deleted: true, existed: true }, summary: `deleted ${path}` };
};

const list: Handler = async (_args, path, workspace) => {
  const directory = await workspace.directory(path, { create: false });
  const entries = (await readdir(directory, { withFileTypes: true })).filter((entry) => !(path === '' && /^\.git$/i.test(entry.name)));
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const shown = entries.slice(0, LIST_MAX_ENTRIES).map((entry) => ({
    name: entry.name,
    type: entry.isDirectory() ? 'directory' : entry.isFile() ? 'file' : entry.isSymbolicLink() ? 'symlink' : 'other',
  }));
  const where = path || '.';
  return { ok: true, output: { path: where, entries: shown, truncated: entries.length > LIST_MAX_ENTRIES, total: entries.length }, summary: `listed ${where} (${entries.length} entries)` };
};

const search: Handler = async (args, path, workspace) => {
  const directory = await workspace.directory(path, { create: false });
  const files = await fg(args.glob ?? '**/*', {
    cwd: directory,
    dot: true,
    onlyFiles: true,
    followSymbolicLinks: false,
    ignore: ['**/.git/**', '.git/**'],
    suppressErrors: true,
    caseSensitiveMatch: true,
  });
  files.sort();
  const pattern = args.pattern!;
  const matches: JsonObject[] = [];
  let scanned = 0;
  let truncated = files.length > SEARCH_MAX_FILES;
  for (const file of files.slice(0, SEARCH_MAX_FILES)) {
    const relativePath = path ? `${path}/${file}` : file;
    const checked = normaliseWorkspacePath(relativePath, { allowRoot: false });
    if (!checked.ok || checked.path !== relativePath) continue;
    let bytes: Buffer;
    try {
      const resolved = await workspace.resolve(relativePath, { createParents: false });
      if (!resolved.exists || resolved.symlink) continue;
      bytes = (await readText(resolved.absolute, relativePath)).bytes;
    } catch (error) {
      // One unreadable file (too large, a link out, gone meanwhile) does not end the search.
      if (error instanceof ToolFailure) continue;
      throw error;
    }
    scanned++;
    if (isBinary(bytes)) continue;
    const lines = bytes.toString('utf8').split('\n');
    for (const [index, line] of lines.entries()) {
      if (!line.includes(pattern)) continue;
      if (matches.length === SEARCH_MAX_MATCHES) {
        truncated = true;
        break;
      }
      matches.push({ path: relativePath, line: index + 1, text: truncateText(line, SEARCH_LINE_CHARS).text });
    }
    if (matches.length === SEARCH_MAX_MATCHES && truncated) break;
  }
  const where = path || '.';
  return {
    ok: true,
    output: { path: where, pattern, matches, filesScanned: scanned, truncated },
    summary: `searched ${where} for "${oneLine(pattern, 60)}": ${matches.length} match(es)`,
  };
};

const HANDLERS: Record<FileOp, Handler> = { read, write, edit, delete: remove, list, search };

export const filesTool: BuiltinTool<FilesArgs> = {
  descriptor: {
    tool: 'files',
    description:
      'Reads, writes, lists, deletes, searches and edits files inside the run workspace. Paths are relative to the workspace; ' +
      'absolute paths, ".." escapes, links leading outside and the .git directory are refused. edit replaces exactly one occurrence of `find`.',
    parameters: toParameters(ArgsSchema),
    argsSchema: ArgsSchema,
    verb: (args) => VERB[args.op],
    resource(args) {
      const path = normalPath(args);
      if (args.op === 'search') return path ? `${path}/**` : '**';
      return path || '**';
    },
    mutating: (args) => args.op === 'write' || args.op === 'edit' || args.op === 'delete',
    // The same content written (or the same path deleted) twice leaves the same workspace.
    idempotentByKey: () => true,
    credentials: () => [],
    redact(args) {
      const redacted: JsonObject = { op: args.op, path: args.path };
      for (const field of ['content', 'find', 'replace'] as const) {
        const value = args[field];
        if (value !== undefined) redacted[field] = redactBulk(value);
      }
      if (args.pattern !== undefined) redacted['pattern'] = args.pattern;
      if (args.glob !== undefined) redacted['glob'] = args.glob;
      if (args.offset !== undefined) redacted['offset'] = args.offset;
      return redacted;
    },
  },

  async execute(args, ctx) {
    const workspace = await Workspace.open(ctx.workDir);
    return HANDLERS[args.op](args, normalPath(args), workspace);
  },
};
