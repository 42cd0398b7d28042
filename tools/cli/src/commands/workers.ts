import { z } from 'zod';
import type { ApiClient } from '../api-client';
import { CliError, ExitCode } from '../errors';

export const WorkerSchema = z.looseObject({ id: z.string().min(1), name: z.string() });
export type WorkerRecord = z.infer<typeof WorkerSchema>;

/** The list answers either a page `{items, nextCursor}` or a plain array. */
const WorkerListSchema = z.union([
  z.array(WorkerSchema),
  z.looseObject({ items: z.array(WorkerSchema), nextCursor: z.string().nullish() }),
]);

const MAX_PAGES = 1_000;

/** Walks every page of the workspace's workers until `match` finds one. */
export async function findWorker(client: ApiClient, match: (worker: WorkerRecord) => boolean): Promise<WorkerRecord | undefined> {
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer = await client.get(client.workspacePath('workers'), WorkerListSchema, { cursor });
    const items = Array.isArray(answer) ? answer : answer.items;
    const found = items.find(match);
    if (found) return found;
    const next = Array.isArray(answer) ? undefined : (answer.nextCursor ?? undefined);
    if (!next || next === cursor) return undefined;
    cursor = next;
  }
  throw new CliError(`the worker list did not end after ${MAX_PAGES} pages`, ExitCode.failure);
}
