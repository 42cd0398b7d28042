import { PassThrough, type Duplex } from 'node:stream';
import type DockerModem from 'docker-modem';

/** The two streams of an attached container, split out of the engine's multiplexed stream. */
export class ContainerOutput {
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  /** Settles when the engine closed the attach stream (the container's output is all written). */
  readonly closed: Promise<void>;

  constructor(
    modem: DockerModem,
    private readonly attached: Duplex,
  ) {
    modem.demuxStream(attached, this.stdout, this.stderr);
    this.closed = new Promise((resolve) => {
      let finished = false;
      const finish = () => {
        if (finished) return;
        finished = true;
        this.stdout.end();
        this.stderr.end();
        resolve();
      };
      // demuxStream writes synchronously on 'data', so at 'end' every frame has been passed on.
      attached.on('end', finish);
      attached.on('close', finish);
      // A reset once the container is removed ends the output like a close: nothing to retry.
      attached.on('error', finish);
    });
  }

  /** Stops reading (the engine is gone or would not let go); what was read stays in the streams. */
  close(): void {
    if (!this.attached.destroyed) this.attached.destroy();
  }
}
