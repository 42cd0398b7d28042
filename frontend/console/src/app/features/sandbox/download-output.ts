import { toProblem } from '../../shared/problem';
import { ApiError } from '../../core/api';
import { execPath, type ExecResult, type ExecStream } from './sandbox.api';

async function sha256Hex(bytes: ArrayBuffer): Promise<string | null> {
  // SubtleCrypto exists only in secure contexts (https, localhost); elsewhere the server's check stands alone.
  if (!globalThis.crypto?.subtle) return null;
  const digest = await globalThis.crypto.subtle.digest('SHA-256', bytes);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * Downloads the whole of one stream of an exec as a file, after checking it against the digest
 * its result states (the server checked it too before sending it).
 */
export async function downloadExecOutput(workspaceId: string | null, result: ExecResult, stream: ExecStream): Promise<void> {
  const response = await fetch(`${execPath(workspaceId, result.execId)}/output?stream=${stream}`, { credentials: 'same-origin', headers: { accept: 'application/octet-stream, application/problem+json' } });
  if (!response.ok) {
    const body: unknown = await response.json().catch(() => null);
    throw new ApiError(toProblem(response.status, body, response.statusText));
  }
  const bytes = await response.arrayBuffer();
  const expected = result[stream].digest;
  const actual = await sha256Hex(bytes);
  if (actual !== null && actual !== expected) {
    throw new ApiError(toProblem(0, { title: 'The download does not match its digest', detail: `${stream} hashes to ${actual}, its result says ${expected}; nothing was saved` }));
  }
  const url = URL.createObjectURL(new Blob([bytes], { type: 'application/octet-stream' }));
  const anchor = document.createElement('a');
  anchor.href = url;
  anchor.download = `${result.execId.replace(/[^A-Za-z0-9_.-]/g, '_')}.${stream}`;
  document.body.appendChild(anchor);
  anchor.click();
  anchor.remove();
  // The click has handed the blob to the download; revoking at once can cancel it in some browsers.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
