import { z } from 'zod';
import { createZodDto } from 'nestjs-zod';
import { ActorNameSchema, ActorOperationSchema, MAX_ACTOR_TOKEN_LIFETIME_DAYS } from '@packetagent/contracts';

const DAY_MS = 86_400_000;

export const IssueActorTokenCommand = z.strictObject({
  actorName: ActorNameSchema.describe('the actor that owns what the token deploys; a new token for the same name keeps them'),
  operations: z
    .array(ActorOperationSchema)
    .min(1)
    .refine((list) => new Set(list).size === list.length, 'must not repeat an operation')
    .describe('what the token may do'),
  expiresAt: z.iso
    .datetime({ offset: true })
    .refine((value) => Date.parse(value) > Date.now(), 'must be in the future')
    .refine((value) => Date.parse(value) <= Date.now() + MAX_ACTOR_TOKEN_LIFETIME_DAYS * DAY_MS, `must be within ${MAX_ACTOR_TOKEN_LIFETIME_DAYS} days`)
    .describe('when the token stops working'),
});
export type IssueActorTokenCommand = z.output<typeof IssueActorTokenCommand>;
export class IssueActorTokenDto extends createZodDto(IssueActorTokenCommand) {}

export const IssuedActorToken = z.object({
  id: z.string(),
  token: z.string().describe('the whole token, "pade_<id>_<secret>"; shown this once only'),
  actorName: z.string(),
  operations: z.array(ActorOperationSchema),
  expiresAt: z.iso.datetime(),
});
export type IssuedActorToken = z.output<typeof IssuedActorToken>;
export class IssuedActorTokenDto extends createZodDto(IssuedActorToken) {}

export const ActorTokenList = z.object({
  items: z.array(
    z.object({
      id: z.string(),
      actorName: z.string(),
      operations: z.array(ActorOperationSchema),
      prefix: z.string().describe('the start of the token, to recognise it'),
      createdAt: z.iso.datetime(),
      expiresAt: z.iso.datetime(),
      revokedAt: z.iso.datetime().nullable(),
      lastUsedAt: z.iso.datetime().nullable(),
    }),
  ),
});
export type ActorTokenList = z.output<typeof ActorTokenList>;
export class ActorTokenListDto extends createZodDto(ActorTokenList) {}
