import { Writable, type Duplex } from 'node:stream';

/**
 * A container's stdin: raw bytes on the hijacked attach connection (unlike the output, stdin is
 * not framed). Ending it half-closes that connection, so the engine reads EOF and closes the
 * container's stdin (StdinOnce) while the output goes on arriving on the other half. It is
 * destroyed once the connection closes: the container is gone, nothing more can reach it.
 */
export class ContainerStdin extends Writable {
  constructor(private readonly attached: Duplex) {
    super();
    // A container that exits while its stdin is written to must not raise EPIPE on the service.
    this.on('error', () => undefined);
    attached.once('close', () => this.destroy());
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    // Never a write on an ended or destroyed connection: the error would be the output's too.
    if (!this.connected()) return callback(closedStdin());
    this.attached.write(chunk, callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.halfClose();
    callback();
  }

  /** Destroyed before its end, it still sends the EOF: the connection carries the output on. */
  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.halfClose();
    callback(error);
  }

  private halfClose(): void {
    if (this.connected()) this.attached.end();
  }

  private connected(): boolean {
    return !this.attached.destroyed && !this.attached.writableEnded;
  }
}

function closedStdin(): Error {
  return Object.assign(new Error("the container's stdin is closed"), { code: 'EPIPE' });
}
