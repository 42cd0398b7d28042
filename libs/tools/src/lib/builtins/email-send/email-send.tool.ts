import { CREDENTIAL_NAME_PATTERN, normaliseResource } from '@packetagent/contracts';
import { z } from 'zod';
import { failure, type BuiltinTool } from '../../internal/builtin';
import { toParameters } from '../../internal/schema';
import { redactBulk } from '../../internal/text';

const ArgsSchema = z.strictObject({
  to: z
    .string()
    .max(320)
    .superRefine((to, ctx) => {
      const checked = normaliseResource('email_send', to);
      if (!checked.ok) ctx.addIssue({ code: 'custom', message: checked.message });
      else if (checked.value.startsWith('*@')) ctx.addIssue({ code: 'custom', message: 'name one recipient, not a domain' });
    })
    .describe('One recipient address.'),
  subject: z.string().min(1).max(998).describe('Subject line.'),
  body: z.string().min(1).max(256 * 1024).describe('Plain-text body.'),
  credential: z.string().regex(CREDENTIAL_NAME_PATTERN, 'not a credential name').optional().describe('Name of the credential for the mail service, when the deployment uses one.'),
});

export type EmailSendArgs = z.output<typeof ArgsSchema>;

export const emailSendTool: BuiltinTool<EmailSendArgs> = {
  descriptor: {
    tool: 'email_send',
    description: 'Sends one plain-text email to one recipient.',
    parameters: toParameters(ArgsSchema),
    argsSchema: ArgsSchema,
    verb: () => 'send',
    resource: (args) => args.to.toLowerCase(),
    mutating: () => true,
    idempotentByKey: () => false,
    credentials: (args) => (args.credential ? [args.credential] : []),
    redact: (args) => ({ to: args.to, subject: args.subject, body: redactBulk(args.body), ...(args.credential ? { credential: args.credential } : {}) }),
  },

  async execute() {
    return failure('email_unavailable', 'email delivery is not configured');
  },
};
