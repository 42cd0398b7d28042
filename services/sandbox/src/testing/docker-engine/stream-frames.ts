/** Stream numbers of Docker's multiplexed attach stream. */
export const STREAM_NUMBER = { stdin: 0, stdout: 1, stderr: 2 } as const;

/**
 * One frame of a non-TTY attach stream: an 8-byte header (stream number, three zero bytes,
 * payload length as a big-endian uint32) and the payload.
 */
export function streamFrame(stream: 'stdout' | 'stderr', payload: Buffer): Buffer {
  const header = Buffer.alloc(8);
  header.writeUInt8(STREAM_NUMBER[stream], 0);
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
}

/** The bytes cut at the given offsets (out-of-range and repeated offsets ignored). */
export function splitBytes(bytes: Buffer, offsets: readonly number[]): Buffer[] {
  const cuts = [...new Set(offsets)].filter((offset) => offset > 0 && offset < bytes.length).sort((a, b) => a - b);
  const parts: Buffer[] = [];
  let from = 0;
  for (const cut of cuts) {
    parts.push(bytes.subarray(from, cut));
    from = cut;
  }
  parts.push(bytes.subarray(from));
  return parts;
}
