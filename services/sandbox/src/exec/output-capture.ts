import { createHash, type Hash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { ExecStreamOutput, PayloadRef } from '@packetagent/contracts';
import type { PayloadStore } from '@packetagent/eventstore';

/** Raw bytes per stored chunk: large enough for few rows, small enough for the payload limit once base64-encoded. */
export const OUTPUT_CHUNK_BYTES = 4 * 1024 * 1024;

/** A stream that wrote nothing (or whose output was not kept): no bytes, the digest of none. */
export const NO_OUTPUT: ExecStreamOutput = { preview: '', bytes: 0, truncated: false, digest: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', chunks: [] };

/** Text for previews and live views: UTF-8 with invalid sequences and NUL (which no JSON column takes) as U+FFFD. */
export function outputText(bytes: Buffer): string {
  return bytes.toString('utf8').replaceAll('\u0000', '\uFFFD');
}

/** What both streams of one exec share: the output limit, and who is told when it is reached. */
export class OutputBudget {
  private kept = 0;
  private exceeded = false;

  constructor(
    private readonly limitBytes: number,
    private readonly onExceeded: () => void,
  ) {}

  /** How many of `size` new bytes may still be kept. */
  take(size: number): number {
    const allowed = Math.max(0, Math.min(size, this.limitBytes - this.kept));
    this.kept += allowed;
    if (allowed < size && !this.exceeded) {
      this.exceeded = true;
      this.onExceeded();
    }
    return allowed;
  }
}

/**
 * One output stream: the first `previewBytes` as text, every kept byte hashed and stored in
 * chunks through the payload store while the command runs. The stream is paused while a chunk
 * is being stored, so a command writing faster than Postgres takes it waits instead of filling memory.
 */
export class OutputCapture {
  private readonly hash: Hash = createHash('sha256');
  private readonly preview: Buffer[] = [];
  private previewSize = 0;
  private pending: Buffer[] = [];
  private pendingSize = 0;
  private bytes = 0;
  private readonly chunks: PayloadRef[] = [];
  private storing: Promise<void> = Promise.resolve();
  private failure: unknown = null;
  private readonly done: Promise<void>;

  constructor(
    stream: Readable,
    private readonly budget: OutputBudget,
    private readonly store: { payloads: PayloadStore; workspaceId: string },
    private readonly previewBytes: number,
    onText: (text: string) => void,
  ) {
    this.done = new Promise((resolve) => {
      stream.on('data', (data: Buffer) => {
        const keep = this.budget.take(data.length);
        if (keep === 0) return;
        const kept = keep < data.length ? data.subarray(0, keep) : data;
        this.accept(kept);
        onText(outputText(kept));
        if (this.pendingSize >= OUTPUT_CHUNK_BYTES) {
          stream.pause();
          this.flush();
          void this.storing.then(() => stream.resume());
        }
      });
      stream.once('close', resolve);
      stream.once('end', resolve);
      stream.once('error', resolve);
    });
  }

  /** Waits for the stream's end and the last chunk to be stored. */
  async finish(): Promise<ExecStreamOutput> {
    await this.done;
    this.flush();
    await this.storing;
    if (this.failure) throw this.failure;
    const preview = Buffer.concat(this.preview);
    return {
      preview: outputText(preview),
      bytes: this.bytes,
      truncated: this.bytes > preview.length,
      digest: this.hash.digest('hex'),
      chunks: this.chunks,
    };
  }

  private accept(data: Buffer): void {
    this.bytes += data.length;
    this.hash.update(data);
    if (this.previewSize < this.previewBytes) {
      const part = data.subarray(0, this.previewBytes - this.previewSize);
      this.preview.push(part);
      this.previewSize += part.length;
    }
    this.pending.push(data);
    this.pendingSize += data.length;
  }

  private flush(): void {
    if (this.pendingSize === 0) return;
    const chunk = Buffer.concat(this.pending);
    this.pending = [];
    this.pendingSize = 0;
    this.storing = this.storing.then(async () => {
      if (this.failure) return;
      try {
        this.chunks.push(await this.store.payloads.putJson(this.store.workspaceId, { base64: chunk.toString('base64') }));
      } catch (error) {
        this.failure = error;
      }
    });
  }
}
