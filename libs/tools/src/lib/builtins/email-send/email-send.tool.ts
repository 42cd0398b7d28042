import { CREDENTIAL_NAME_PATTERN, normaliseResource } from '@packetagent/contracts';
import { z } from 'zod';
import { ToolFailure } from '../../errors';
import { failure, type BuiltinTool } from '../../internal/builtin';
import { toParameters } from '../../internal/schema';
import { oneLine, redactBulk } from '../../internal/text';
import { sendSmtpMail } from '../../mail/send-smtp-mail';
import { parseSmtpConfig } from '../../mail/smtp-config';
import { SmtpError } from '../../mail/smtp-error';
import type { ToolOutcome } from '../../tool.types';

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
  // Optional in the schema so calls planned before email worked still parse; execute asks for it.
  credential: z.string().regex(CREDENTIAL_NAME_PATTERN, 'not a credential name').optional().describe('Name of the credential holding the SMTP server configuration (required to send).'),
});

export type EmailSendArgs = z.output<typeof ArgsSchema>;

export const emailSendTool: BuiltinTool<EmailSendArgs> = {
  descriptor: {
    tool: 'email_send',
    description: 'Sends one plain-text email to one recipient through the SMTP server configured in a named credential.',
    parameters: toParameters(ArgsSchema),
    argsSchema: ArgsSchema,
    verb: () => 'send',
    resource: (args) => args.to.toLowerCase(),
    mutating: () => true,
    idempotentByKey: () => false,
    credentials: (args) => (args.credential ? [args.credential] : []),
    redact: (args) => ({ to: args.to, subject: args.subject, body: redactBulk(args.body), ...(args.credential ? { credential: args.credential } : {}) }),
  },

  async execute(args, ctx, env): Promise<ToolOutcome> {
    if (!args.credential) {
      return failure('credential_required', 'email_send needs the SMTP credential: name it in the "credential" argument, and the grant of email_send must list it under credentials');
    }
    const secret = ctx.credentials[args.credential];
    if (!secret) throw new ToolFailure('credential_unavailable', `the credential "${args.credential}" was not provided for this call`);
    const to = args.to.toLowerCase();
    try {
      const config = parseSmtpConfig(secret, `the credential "${args.credential}"`);
      const sent = await sendSmtpMail({
        config,
        message: { to, subject: args.subject, text: args.body },
        allowPrivate: env.config.httpAllowPrivate,
        timeoutMs: env.config.httpTimeoutMs,
        signal: ctx.signal,
        resolveHost: env.resolveHost,
      });
      return { ok: true, output: { to, sent: true, messageId: sent.messageId }, summary: `sent "${oneLine(args.subject, 80)}" to ${to}` };
    } catch (error) {
      // An abort is the registry's to report (ToolAbortedError); whether the message left is unknown.
      if (!(error instanceof SmtpError) || ctx.signal.aborted) throw error;
      return failure(error.code, error.message, { to, smtpCode: error.smtpCode, retryable: error.retryable });
    }
  },
};
