import type { JsonObject, JsonValue, WorkerDefinition } from '@packetagent/contracts';
import type { ChatMessage } from '@packetagent/providers';
import type { RunAggregate } from './run.state';

/** The first user message: the activation's input, as the model reads it. */
export function taskMessage(input: JsonValue): string {
  const shown = input === null || input === undefined ? '(none)' : typeof input === 'string' ? input : JSON.stringify(input, null, 2);
  return ['Input:', shown].join('\n');
}

export function systemPrompt(definition: WorkerDefinition, criteria: readonly string[]): string {
  const exit =
    'finish' in definition.exit
      ? 'When the task is done, call the `finish` tool with a summary' +
        (criteria.length ? ` and, for each done-criterion, whether it is met:\n${criteria.map((c) => `- ${c}`).join('\n')}` : '.')
      : `When the task is done, call the \`finish\` tool with \`output\` matching this JSON Schema:\n${JSON.stringify((definition.exit as { outputSchema: JsonObject }).outputSchema)}`;
  return `${definition.instructions}\n\n${exit}`;
}

/** The conversation sent to the model: the task, the transcript, and a nudge after a turn that called nothing. */
export function requestMessages(task: string, state: RunAggregate): ChatMessage[] {
  const messages: ChatMessage[] = [{ role: 'user', content: task }, ...state.messages];
  const last = messages[messages.length - 1];
  if (last?.role === 'assistant' && last.toolCalls.length === 0) {
    messages.push({ role: 'user', content: 'Continue with the task. Call `finish` when it is done.' });
  }
  return messages;
}

/** About four characters a token: enough to decide when to compact, never billed. */
export function estimateTokens(system: string, messages: readonly ChatMessage[]): number {
  let chars = system.length;
  for (const message of messages) {
    if (message.role === 'tool') for (const result of message.results) chars += result.content.length + 20;
    else chars += message.content.length + (message.role === 'assistant' ? message.toolCalls.reduce((sum, call) => sum + call.rawArguments.length + call.name.length, 0) : 0);
  }
  return Math.ceil(chars / 4);
}
