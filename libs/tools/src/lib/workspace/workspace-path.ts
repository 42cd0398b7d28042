import { lstat, mkdir, realpath, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { normaliseResource } from '@packetagent/contracts';
import { ToolFailure } from '../errors';

/** The repository's own metadata: hooks and config there run programs, so no file tool touches it. */
const GIT_DIR = /^\.git$/i;

export type PathCheck = { ok: true; path: string } | { ok: false; message: string };

/**
 * A workspace-relative path in its normal form ('' for the workspace itself, only when `allowRoot`).
 * The same form is the resource policy checks, so what is authorised is what is touched.
 */
export function normaliseWorkspacePath(raw: string, { allowRoot }: { allowRoot: boolean }): PathCheck {
  if (raw.length > 1024) return { ok: false, message: 'must be at most 1024 characters' };
  if (raw === '' || raw === '.' || raw === './') {
    return allowRoot ? { ok: true, path: '' } : { ok: false, message: 'names the workspace itself, not a file in it' };
  }
  if (/[*?[\]{}]/.test(raw)) return { ok: false, message: 'wildcards are not allowed in a path' };
  const checked = normaliseResource('files', raw);
  if (!checked.ok) return { ok: false, message: checked.message };
  const segments = checked.value.split('/');
  if (segments.some((segment) => GIT_DIR.test(segment))) return { ok: false, message: 'the .git directory is not accessible to file tools' };
  if (segments.some((segment) => Buffer.byteLength(segment) > 255)) return { ok: false, message: 'a path segment is longer than 255 bytes' };
  return { ok: true, path: checked.value };
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

export interface ResolvedPath {
  /** Where the path really is (symbolic links inside the workspace followed). */
  absolute: string;
  /** The directory entry the path names (the link itself when it is a symbolic link). */
  entry: string;
  exists: boolean;
  /** The final component was a symbolic link (to somewhere inside the workspace). */
  symlink: boolean;
}

/**
 * The run's workspace on disk. Every path is resolved one component at a time from the real
 * workspace root: a symbolic link anywhere on the way is followed only when its real target is
 * inside the workspace (and outside `.git`).
 */
export class Workspace {
  private constructor(readonly root: string) {}

  static async open(workDir: string): Promise<Workspace> {
    let root: string;
    try {
      root = await realpath(workDir);
    } catch (error) {
      throw new ToolFailure('workspace_unavailable', 'the run workspace does not exist', null, { cause: error });
    }
    if (!(await stat(root)).isDirectory()) throw new ToolFailure('workspace_unavailable', 'the run workspace is not a directory');
    return new Workspace(root);
  }

  /** The workspace-relative form of an absolute path inside it. */
  relative(absolute: string): string {
    return relative(this.root, absolute).split(sep).join('/');
  }

  private ensureInside(real: string, shown: string): void {
    const inside = real === this.root || real.startsWith(`${this.root}${sep}`);
    if (!inside) throw new ToolFailure('path_outside_workspace', `${shown} leads outside the run workspace through a symbolic link`);
    if (this.relative(real).split('/').some((segment) => GIT_DIR.test(segment))) {
      throw new ToolFailure('path_outside_workspace', `${shown} leads into the .git directory through a symbolic link`);
    }
  }

  private async follow(path: string, shown: string): Promise<string> {
    let real: string;
    try {
      real = await realpath(path);
    } catch (error) {
      if (isMissing(error)) throw new ToolFailure('path_outside_workspace', `${shown} is a symbolic link to nothing`);
      throw error;
    }
    this.ensureInside(real, shown);
    return real;
  }

  /** The real directory `path` ('' for the root) names, creating missing directories when asked. */
  async directory(path: string, { create }: { create: boolean }): Promise<string> {
    let current = this.root;
    const walked: string[] = [];
    const segments = path === '' ? [] : path.split('/');
    // Only normal forms get here; a dot segment would step out without passing a link.
    if (segments.some((segment) => segment === '' || segment === '.' || segment === '..')) throw new ToolFailure('path_invalid', `${path} is not a normalised workspace path`);
    for (const segment of segments) {
      walked.push(segment);
      const shown = walked.join('/');
      let next = join(current, segment);
      let info;
      try {
        info = await lstat(next);
      } catch (error) {
        if (!isMissing(error)) throw error;
        if (!create) throw new ToolFailure('not_found', `${shown} does not exist`);
        await mkdir(next, { mode: 0o755 });
        info = await lstat(next);
      }
      if (info.isSymbolicLink()) {
        next = await this.follow(next, shown);
        info = await stat(next);
      }
      if (!info.isDirectory()) throw new ToolFailure('not_a_directory', `${shown} is not a directory`);
      current = next;
    }
    return current;
  }

  /** Where a non-root path is, with its parent directories resolved (and created when asked). */
  async resolve(path: string, { createParents }: { createParents: boolean }): Promise<ResolvedPath> {
    const slash = path.lastIndexOf('/');
    const name = path.slice(slash + 1);
    if (name === '' || name === '.' || name === '..') throw new ToolFailure('path_invalid', `${path} is not a normalised workspace path`);
    const parent = await this.directory(slash < 0 ? '' : path.slice(0, slash), { create: createParents });
    const absolute = join(parent, name);
    try {
      const info = await lstat(absolute);
      if (!info.isSymbolicLink()) return { absolute, entry: absolute, exists: true, symlink: false };
      return { absolute: await this.follow(absolute, path), entry: absolute, exists: true, symlink: true };
    } catch (error) {
      if (isMissing(error)) return { absolute, entry: absolute, exists: false, symlink: false };
      throw error;
    }
  }
}
