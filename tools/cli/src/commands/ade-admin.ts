import { InvalidArgumentError } from 'commander';
import { z } from 'zod';
import { ACTOR_OPERATIONS, type ActorOperation } from '@packetagent/contracts';
import type { CommandContext } from '../context';
import { readRaw } from './ade-package';
import { ADE_TOKEN_VARIABLE } from './ade-door-client';

const IssuedSchema = z.looseObject({ id: z.string(), token: z.string(), actorName: z.string(), operations: z.array(z.string()), expiresAt: z.string() });
const TokenSchema = z.looseObject({
  id: z.string(),
  actorName: z.string(),
  operations: z.array(z.string()),
  prefix: z.string(),
  createdAt: z.string(),
  expiresAt: z.string(),
  revokedAt: z.string().nullable(),
  lastUsedAt: z.string().nullable(),
});
type ActorToken = z.infer<typeof TokenSchema>;
const TokenListSchema = z.looseObject({ items: z.array(TokenSchema) });
const PublisherSchema = z.looseObject({ fingerprint: z.string(), name: z.string(), createdAt: z.string() });
const PublisherListSchema = z.looseObject({ items: z.array(PublisherSchema) });

const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `30d`, `12h`, `90m`: a whole number of days, hours or minutes, as milliseconds. */
export function parseLifetime(value: string): number {
  const match = /^([1-9]\d{0,5})([mhd])$/.exec(value.trim());
  if (!match) throw new InvalidArgumentError('a whole number of days, hours or minutes, e.g. 30d, 12h or 90m.');
  return Number(match[1]) * UNIT_MS[match[2]!]!;
}

/** `deploy,activate,events` (or `all`), each one of ACTOR_OPERATIONS; a repeat is dropped. */
export function parseOperations(value: string): ActorOperation[] {
  const names = value.split(',').map((name) => name.trim()).filter(Boolean);
  if (names.length === 1 && names[0] === 'all') return [...ACTOR_OPERATIONS];
  const known = new Set<string>(ACTOR_OPERATIONS);
  const unknown = names.filter((name) => !known.has(name));
  if (names.length === 0 || unknown.length > 0) {
    throw new InvalidArgumentError(`${unknown.length ? `unknown: ${unknown.join(', ')}; ` : ''}a comma-separated list of ${ACTOR_OPERATIONS.join(', ')} (or all).`);
  }
  return [...new Set(names)] as ActorOperation[];
}

export function tokenState(token: Pick<ActorToken, 'revokedAt' | 'expiresAt'>, nowMs: number): 'active' | 'revoked' | 'expired' {
  if (token.revokedAt !== null) return 'revoked';
  return Date.parse(token.expiresAt) <= nowMs ? 'expired' : 'active';
}

export function tokenLine(token: ActorToken, nowMs: number): string {
  return [token.id, token.actorName, tokenState(token, nowMs), `expires ${token.expiresAt}`, `last used ${token.lastUsedAt ?? 'never'}`, token.operations.join(',')].join('  ');
}

/** `packetagent ade actor issue NAME`: prints the token, which the server shows this once. */
export async function issueActorToken(context: CommandContext, actorName: string, options: { operations: ActorOperation[]; expiresIn: number; now: number }): Promise<void> {
  const { client } = context;
  const body = { actorName, operations: options.operations, expiresAt: new Date(options.now + options.expiresIn).toISOString() };
  const issued = await client.post(client.workspacePath('packetade', 'actors'), { json: body }, IssuedSchema);
  context.report(
    [
      `actor token ${issued.id} for ${issued.actorName}, expires ${issued.expiresAt}`,
      `operations: ${issued.operations.join(', ')}`,
      `token: ${issued.token}  (shown once: store it now, and give it to the client as ${ADE_TOKEN_VARIABLE})`,
    ],
    issued,
  );
}

export async function listActorTokens(context: CommandContext, now: number): Promise<void> {
  const { client } = context;
  const answer = await client.get(client.workspacePath('packetade', 'actors'), TokenListSchema);
  context.report(answer.items.length ? answer.items.map((token) => tokenLine(token, now)) : ['no actor tokens'], answer);
}

export async function revokeActorToken(context: CommandContext, tokenId: string): Promise<void> {
  const { client } = context;
  await client.delete(client.workspacePath('packetade', 'actors', tokenId));
  context.report([`actor token ${tokenId} revoked`], { id: tokenId, revoked: true });
}

/** `packetagent ade publisher trust NAME KEY.pem`: packages this key signs are accepted in the workspace. */
export async function trustPublisher(context: CommandContext, name: string, keyFile: string): Promise<void> {
  const { client } = context;
  const publicKey = (await readRaw(context.documents, keyFile)).toString('utf8');
  const publisher = await client.post(client.workspacePath('packetade', 'publishers'), { json: { name, publicKey } }, PublisherSchema);
  context.report([`trusted publisher ${publisher.name}: ${publisher.fingerprint}`], publisher);
}

export async function listPublishers(context: CommandContext): Promise<void> {
  const { client } = context;
  const answer = await client.get(client.workspacePath('packetade', 'publishers'), PublisherListSchema);
  context.report(answer.items.length ? answer.items.map((p) => `${p.fingerprint}  ${p.name}  trusted since ${p.createdAt}`) : ['no trusted publishers'], answer);
}

/** `packetagent ade acknowledge DIGEST KEY-ID`: this one package, signed by this key the workspace does not trust, is accepted. */
export async function acknowledgePackage(context: CommandContext, packageDigest: string, keyId: string, options: { note?: string }): Promise<void> {
  const { client } = context;
  const body = { packageDigest, keyId, ...(options.note !== undefined ? { note: options.note } : {}) };
  await client.postWithoutAnswer(client.workspacePath('packetade', 'acknowledgements'), { json: body });
  context.report([`acknowledged package ${packageDigest} signed by ${keyId}`], { ...body, acknowledged: true });
}
