import { ValidationError } from '@packetagent/contracts';
import { z } from 'zod';
import { issuesOf } from './internal/schema';
import type { ToolsConfig } from './tool.types';

const HOST_PORT = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/;

/** What each setting means is documented on ToolsConfig; this adds the defaults and the rules. */
export const ToolsConfigSchema = z.strictObject({
  httpAllowPrivate: z.array(z.string().regex(HOST_PORT, 'expected host:port')).default([]),
  httpIdempotencyKeyOrigins: z.array(z.url({ protocol: /^https?$/ })).default([]),
  /** Bytes; the socket is closed as soon as a response grows past it. */
  httpMaxResponseBytes: z.number().int().positive().default(5 * 1024 * 1024),
  /** Milliseconds for the whole request: resolution, connection and the complete response. */
  httpTimeoutMs: z.number().int().positive().default(30_000),
  slackWebhookBaseUrl: z.url({ protocol: /^https?$/ }).optional(),
  githubBaseUrl: z.url({ protocol: /^https?$/ }).default('https://api.github.com'),
  gitTimeoutMs: z.number().int().positive().default(120_000),
});

export const DEFAULT_TOOLS_CONFIG: ToolsConfig = ToolsConfigSchema.parse({});

/** A complete configuration from a partial one; a setting outside its rules is a ValidationError. */
export function toolsConfig(partial: Partial<ToolsConfig> = {}): ToolsConfig {
  const parsed = ToolsConfigSchema.safeParse(partial);
  if (!parsed.success) throw new ValidationError('invalid tools configuration', issuesOf(parsed.error));
  return parsed.data;
}
