import type { z } from 'zod';

/**
 * A command: a name (its subject token), a request schema and a response schema. Defined here,
 * beside the event schemas, so a caller and the owning service share one contract; libs/bus
 * carries it over NATS request/reply.
 */
export interface CommandDefinition<Req extends z.ZodType, Res extends z.ZodType> {
  name: string;
  request: Req;
  response: Res;
}

export function defineCommand<Req extends z.ZodType, Res extends z.ZodType>(
  name: string,
  request: Req,
  response: Res,
): CommandDefinition<Req, Res> {
  if (!/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/.test(name)) throw new Error(`command name "${name}" must be dotted lower-case`);
  return { name, request, response };
}
