import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { templateScript, type JsonObject } from '@packetagent/contracts';
import { estimatedUsage } from './adapters/common';
import { SleepAbortedError, systemClock, type Clock } from './clock';
import { abortedError, ProviderError } from './errors';
import type { AdapterTurn, CallOptions, ModelRequest, ProviderAdapter, ToolCall } from './provider.types';
import { toolCallFromText } from './tool-arguments';

/** Script names are file names without a path: nothing in one can reach outside the directory. */
export const SCRIPT_NAME = /^[a-z0-9][a-z0-9-_]{0,62}$/;

const ScriptToolCallSchema = z.strictObject({
  name: z.string().min(1).max(200),
  // A string is taken as the raw argument text a model wrote, so a script can send a malformed call.
  arguments: z.union([z.record(z.string(), z.json()), z.string()]).default({}),
});

const ScriptTurnSchema = z
  .strictObject({
    text: z.string().max(1_000_000).optional(),
    toolCalls: z.array(ScriptToolCallSchema).max(64).optional(),
    usage: z.strictObject({ inputTokens: z.number().int().nonnegative(), outputTokens: z.number().int().nonnegative() }).optional(),
    delayMs: z.number().int().nonnegative().max(3_600_000).optional(),
    stopReason: z.enum(['end_turn', 'tool_use', 'max_tokens', 'other']).optional(),
  })
  .refine((turn) => turn.text !== undefined || (turn.toolCalls?.length ?? 0) > 0, { message: 'a turn needs text or toolCalls' });

export const ScriptSchema = z.strictObject({
  description: z.string().max(2_000).optional(),
  pricing: z.strictObject({ inputPerMTokUsd: z.number().nonnegative().max(10_000), outputPerMTokUsd: z.number().nonnegative().max(10_000) }).optional(),
  /** The context window the script stands for (a small one exercises context governance), in tokens. */
  contextWindow: z.number().int().min(1_024).max(10_000_000).optional(),
  turns: z.array(ScriptTurnSchema).min(1).max(10_000),
});

/** A validated script: turn i answers a conversation that already holds i assistant turns. */
export type Script = z.output<typeof ScriptSchema>;
/** A script as written (YAML text parses to this). */
export type ScriptDefinition = z.input<typeof ScriptSchema>;

function issuePath(path: readonly PropertyKey[]): string {
  return path.map((part, index) => (typeof part === 'number' ? `[${part}]` : `${index === 0 ? '' : '.'}${String(part)}`)).join('') || '(root)';
}

/** Validates a script given as YAML text or as an object; errors name the path of every problem. */
export function parseScript(source: string | ScriptDefinition, origin: string): Script {
  let value: unknown = source;
  if (typeof source === 'string') {
    try {
      value = parseYaml(source, { uniqueKeys: true });
    } catch (error) {
      throw new ProviderError('script_invalid', `script ${origin} is not valid YAML: ${error instanceof Error ? error.message.split('\n')[0] : 'parse error'}`, { provider: 'scripted' });
    }
  }
  const parsed = ScriptSchema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${issuePath(issue.path)}: ${issue.message}`).join('; ');
    throw new ProviderError('script_invalid', `script ${origin} is invalid: ${issues}`, { provider: 'scripted' });
  }
  return parsed.data;
}

export function assertScriptName(name: string): void {
  if (!SCRIPT_NAME.test(name)) {
    throw new ProviderError('script_name_invalid', `script name ${JSON.stringify(name.slice(0, 80))} is not allowed: use lower-case letters, digits, - and _ (at most 63)`, {
      provider: 'scripted',
      model: name,
    });
  }
}

export interface ScriptSourceOptions {
  /** Directory of `<name>.yaml` files (PACKETAGENT_SCRIPTS_DIR). */
  dir?: string;
}

/**
 * Where scripts come from: registered in memory (tests, demos) first, then the demos of the
 * shipped templates (`template-<id>`), then the scripts directory. A file is read on every
 * call, so an edited script applies to the next model call.
 */
export class ScriptSource {
  private readonly registered = new Map<string, Script>();
  private readonly parsed = new Map<string, { mtimeMs: number; size: number; script: Script }>();
  private readonly templates = new Map<string, Script>();

  constructor(private readonly options: ScriptSourceOptions = {}) {}

  /** Whether a script can be found at all: a scripts directory is configured, or a script was registered. */
  get configured(): boolean {
    return Boolean(this.options.dir) || this.registered.size > 0;
  }

  register(name: string, script: string | ScriptDefinition): Script {
    assertScriptName(name);
    const parsed = parseScript(script, `"${name}"`);
    this.registered.set(name, parsed);
    return parsed;
  }

  private shipped(name: string, script: JsonObject): Script {
    const cached = this.templates.get(name);
    if (cached) return cached;
    const parsed = parseScript(script as ScriptDefinition, `"${name}" (a template's demo)`);
    this.templates.set(name, parsed);
    return parsed;
  }

  async load(name: string): Promise<Script> {
    assertScriptName(name);
    const registered = this.registered.get(name);
    if (registered) return registered;
    const shipped = templateScript(name);
    if (shipped) return this.shipped(name, shipped);
    if (!this.options.dir) {
      throw new ProviderError('script_not_found', `no script "${name}" is registered and no scripts directory is configured (PACKETAGENT_SCRIPTS_DIR)`, { provider: 'scripted', model: name });
    }
    const file = join(this.options.dir, `${name}.yaml`);
    let text: string;
    try {
      // A script parsed once is reused until its file changes (same size and modification time).
      const stats = await stat(file);
      const cached = this.parsed.get(file);
      if (cached && cached.mtimeMs === stats.mtimeMs && cached.size === stats.size) return cached.script;
      text = await readFile(file, 'utf8');
      const script = parseScript(text, `${name}.yaml`);
      this.parsed.set(file, { mtimeMs: stats.mtimeMs, size: stats.size, script });
      return script;
    } catch (error) {
      if (error instanceof ProviderError) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      throw new ProviderError('script_not_found', `no script "${name}" in ${this.options.dir} (${code === 'ENOENT' ? `${name}.yaml does not exist` : (code ?? 'read failed')})`, {
        provider: 'scripted',
        model: name,
        cause: error,
      });
    }
  }
}

/**
 * Replays a script as if it were a model. Which turn answers depends only on the request's
 * `turn` (or, without it, on how many assistant turns the conversation holds), so a replayed or
 * resumed run gets the same answers.
 */
export class ScriptedAdapter implements ProviderAdapter {
  readonly name = 'scripted' as const;

  constructor(
    private readonly scripts: ScriptSource,
    private readonly clock: Pick<Clock, 'sleep'> = systemClock,
  ) {}

  async complete(request: ModelRequest, options: CallOptions): Promise<AdapterTurn> {
    const name = request.model.model;
    const script = await this.scripts.load(name);
    const index = request.turn ?? request.messages.filter((message) => message.role === 'assistant').length;
    const turn = script.turns[index];
    if (!turn) {
      throw new ProviderError('script_exhausted', `script "${name}" has ${script.turns.length} turn(s) and the conversation asks for turn ${index + 1}`, {
        provider: this.name,
        model: name,
      });
    }
    if (turn.delayMs) {
      try {
        await this.clock.sleep(turn.delayMs, options.signal);
      } catch (error) {
        if (error instanceof SleepAbortedError) throw abortedError(this.name, name, error);
        throw error;
      }
    }
    if (options.signal?.aborted) throw abortedError(this.name, name);
    const toolCalls: ToolCall[] = (turn.toolCalls ?? []).map((call, position) => {
      const id = `call_${index}_${position}`;
      return typeof call.arguments === 'string'
        ? toolCallFromText(id, call.name, call.arguments)
        : { id, name: call.name, arguments: call.arguments as JsonObject, rawArguments: JSON.stringify(call.arguments) };
    });
    const text = turn.text ?? '';
    return {
      text,
      toolCalls,
      stopReason: turn.stopReason ?? (toolCalls.length > 0 ? 'tool_use' : 'end_turn'),
      usage: turn.usage ?? estimatedUsage(request, text, toolCalls),
      ...(turn.usage ? {} : { usageEstimated: true }),
      native: { provider: this.name, model: name, payload: { script: name, turn: index } },
    };
  }
}
