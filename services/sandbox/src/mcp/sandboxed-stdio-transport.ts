import { McpErrorCodes } from '@packetagent/contracts';
import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { DriverExit, DriverProcess } from '../drivers/sandbox-driver';
import { McpCallError, toMcpCallError } from './mcp-call-error';

export interface StdioTransportOptions {
  server: string;
  /** One line (one message) longer than this is refused while it arrives, and the server is stopped. */
  maxMessageBytes: number;
  /**
   * The server broke its session: a line too long, a line that is not JSON-RPC, its process ended.
   * Which request a broken line answered cannot be known, so every request in flight fails with it.
   */
  onBroken(error: McpCallError): void;
}

const STDERR_TAIL_BYTES = 2048;

function describeExit(exit: DriverExit): string {
  if (exit.limit) return `it reached its ${exit.limit} limit`;
  if (exit.signal) return `it was ended by ${exit.signal}`;
  return `it exited with code ${exit.exitCode}`;
}

/**
 * An MCP transport over a process the sandbox driver started (stdin and stdout, newline-delimited
 * JSON-RPC as the SDK's stdio transport frames it), so the server runs inside the sandbox rather
 * than as a child the SDK spawns on the host. Lines are framed here from the chunks as they come,
 * so a long one is measured without being copied over and over.
 */
export class SandboxedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private stderrTail = '';
  private broken = false;
  private closing = false;

  constructor(
    private readonly process: DriverProcess,
    private readonly options: StdioTransportOptions,
  ) {}

  async start(): Promise<void> {
    const stdin = this.process.stdin;
    if (!stdin) throw new McpCallError(McpErrorCodes.unavailable, `${this.options.server}: the sandbox gave the server no stdin`);
    this.process.stdout.on('data', (chunk: Buffer) => this.receive(chunk));
    this.process.stderr.on('data', (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL_BYTES);
    });
    void this.process.exited.then(
      (exit) => this.ended(exit),
      (error: unknown) => this.break(toMcpCallError(error, this.options.server)),
    );
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.process.stdin;
    if (!stdin || stdin.destroyed || this.broken) throw new McpCallError(McpErrorCodes.unavailable, `${this.options.server}: the server process is not running`);
    if (!stdin.write(serializeMessage(message))) await new Promise<void>((resolve) => stdin.once('drain', resolve));
  }

  async close(): Promise<void> {
    this.closing = true;
    this.process.stdin?.end();
    await this.process.kill();
    await this.process.exited.catch(() => undefined);
  }

  private receive(chunk: Buffer): void {
    if (this.broken) return;
    let start = 0;
    for (let newline = chunk.indexOf(0x0a, start); newline !== -1; newline = chunk.indexOf(0x0a, start)) {
      const part = chunk.subarray(start, newline);
      start = newline + 1;
      if (!this.take(part)) return;
      const line = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingBytes);
      this.pending = [];
      this.pendingBytes = 0;
      this.deliver(line.toString('utf8').replace(/\r$/, ''));
      if (this.broken) return;
    }
    if (start < chunk.length) this.take(chunk.subarray(start));
  }

  /** Keeps part of the current line, or breaks the session when the line grows past the limit. */
  private take(part: Buffer): boolean {
    this.pendingBytes += part.length;
    if (this.pendingBytes > this.options.maxMessageBytes) {
      this.pending = [];
      this.break(new McpCallError(McpErrorCodes.resultTooLarge, `${this.options.server} sent a message larger than ${this.options.maxMessageBytes} bytes; it was refused while arriving and the server was stopped`));
      return false;
    }
    if (part.length > 0) this.pending.push(part);
    return true;
  }

  private deliver(line: string): void {
    if (line.trim() === '') return;
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(line);
    } catch (error) {
      const problem = toMcpCallError(error, this.options.server);
      this.break(new McpCallError(McpErrorCodes.protocol, `${problem.message} (a line on stdout that is not JSON-RPC; the server was stopped)`, { cause: error }));
      return;
    }
    this.onmessage?.(message);
  }

  private break(error: McpCallError): void {
    if (this.broken) return;
    this.broken = true;
    this.options.onBroken(error);
    this.onerror?.(error);
    void this.process.kill();
  }

  private ended(exit: DriverExit): void {
    if (!this.closing) {
      const stderr = this.stderrTail.trim();
      this.break(new McpCallError(McpErrorCodes.unavailable, `${this.options.server}: the server process ended (${describeExit(exit)})${stderr ? `; its stderr ended with: ${stderr}` : ''}`));
    }
    this.onclose?.();
  }
}
