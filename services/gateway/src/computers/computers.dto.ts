import { z } from 'zod';
import { createZodDto } from 'nestjs-zod';
import { ComputerCommands, ComputerSpecSchema, ComputerViewSchema, HostKeyFingerprintSchema, jsonIssues } from '@packetagent/contracts';

/**
 * PUT .../computers/{name}: the spec itself, plus what the registry needs to accept it. Strings
 * that Postgres could not store (NUL, lone surrogates) are refused here, so no client byte
 * reaches the registry as something it fails on.
 */
export const PutComputerBody = ComputerSpecSchema.extend({
  acceptHostKey: HostKeyFingerprintSchema.optional().describe(
    'Pin this host key: the fingerprint a previous 409 host_key_unpinned presented (presentedHostKey), once verified on the host, e.g. with `ssh-keyscan HOST | ssh-keygen -lf -`.',
  ),
  expectedVersion: z
    .number()
    .int()
    .positive()
    .optional()
    .describe("The `version` of the computer as read: a newer change answers 409 computer_version_conflict rather than being overwritten."),
}).superRefine((body, ctx) => {
  // jsonIssues writes `roots[0]`; the other issues of the body read `roots.0`.
  for (const issue of jsonIssues(body)) ctx.addIssue({ code: 'custom', path: issue.path.replace(/\[(\d+)\]/g, '.$1').split('.').filter(Boolean), message: issue.message });
});
export class PutComputerBodyDto extends createZodDto(PutComputerBody) {}
export type PutComputerBodyInput = z.output<typeof PutComputerBody>;

export class ComputerViewDto extends createZodDto(ComputerViewSchema) {}
export class ComputerListDto extends createZodDto(ComputerCommands.list.response) {}
