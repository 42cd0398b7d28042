import type { WorkerTemplate } from './worker-template';

export const SUPPORT_INBOX_TRIAGE: WorkerTemplate = {
  id: 'support-inbox-triage',
  version: 1,
  title: 'Support inbox triage',
  category: 'Support',
  schedule: '*/15 * * * *',
  summary: 'Watches a shared mailbox, classifies severity, drafts replies, escalates urgent threads.',
  keywords: ['support', 'inbox', 'mailbox', 'email', 'mail', 'ticket', 'tickets', 'triage', 'customer', 'customers', 'reply', 'replies', 'urgent', 'severity', 'helpdesk', 'escalate'],
  definition: `# Support inbox triage: every 15 minutes, reads new threads from the support mailbox's API,
# classifies each by severity, drafts replies into the run workspace and escalates urgent ones
# to the on-call channel after approval. Store the mailbox API token as support_mailbox and the
# Slack webhook as oncall_webhook before deploying.
apiVersion: packetagent/v1
kind: Worker
name: support-inbox-triage
description: Classifies new support threads by severity, drafts replies and escalates urgent ones.
model: { preset: default }
instructions: |
  You triage the shared support inbox.
  1. Fetch the threads received since the last run from the mailbox API
     (GET https://mail.example.com/api/threads?state=new).
  2. Classify each thread as urgent, high, normal or low, with one sentence saying why.
  3. Draft a reply for every thread into triage/replies/<thread id>.md, in the customer's language,
     polite and specific; never promise dates or refunds.
  4. Write triage/summary.md: one line per thread with its severity and subject.
  5. Post each urgent thread to #support-oncall with its subject and why it is urgent.
  Finish when every thread has a severity and a draft.
input:
  schema:
    type: object
    properties:
      threads:
        type: array
        description: Threads to triage instead of fetching them (a demo or a replay).
        items:
          type: object
          properties:
            id: { type: string }
            from: { type: string }
            subject: { type: string }
            body: { type: string }
          required: [id, subject, body]
tools:
  - tool: http_fetch
    verbs: [GET]
    resources: ["https://mail.example.com/api/threads*"]
    approval: never
    credentials: [support_mailbox]
  - tool: files
    verbs: [read, write, list]
    resources: ["triage/**"]
    approval: never
  - tool: slack_post
    resources: ["#support-oncall"]
    approval: always
    credentials: [oncall_webhook]
budgets:
  perRunUsd: 0.5
  actions:
    slack_post: { perRun: 5 }
bounds: { maxWallSeconds: 600, maxIterations: 12, maxToolCalls: 30, maxConcurrentRuns: 1 }
exit:
  finish:
    criteria:
      - every thread has a severity
      - every thread has a drafted reply
triggers:
  - { name: every-15-minutes, cron: "*/15 * * * *", timezone: UTC, missed: skip }
  - { manual: {} }
`,
  demo: {
    tools: ['files'],
    input: {
      threads: [
        { id: 't-1042', from: 'ana@customer.example', subject: 'Checkout fails for every card', body: 'Since this morning no payment goes through; we are losing orders.' },
        { id: 't-1043', from: 'li@customer.example', subject: 'How do I export invoices?', body: 'Is there a way to download all invoices of last year at once?' },
      ],
    },
    script: {
      description: 'Triage of two demo threads: one urgent, one normal.',
      pricing: { inputPerMTokUsd: 3, outputPerMTokUsd: 15 },
      turns: [
        {
          text: 'Two threads in the input. Drafting a reply to the urgent checkout failure first.',
          toolCalls: [{ name: 'files', arguments: { op: 'write', path: 'triage/replies/t-1042.md', content: 'Hello Ana,\n\nThank you for telling us. Payments failing at checkout is our top priority: the team is on it now and we will write again within the hour with what we found.\n\nThe support team\n' } }],
          usage: { inputTokens: 900, outputTokens: 120 },
        },
        {
          text: 'Drafting the reply about invoice export.',
          toolCalls: [{ name: 'files', arguments: { op: 'write', path: 'triage/replies/t-1043.md', content: 'Hello Li,\n\nYes: under Billing > Invoices, choose the year and press "Download all"; you get one archive with every invoice.\n\nThe support team\n' } }],
          usage: { inputTokens: 1100, outputTokens: 90 },
        },
        {
          text: 'Writing the summary.',
          toolCalls: [{ name: 'files', arguments: { op: 'write', path: 'triage/summary.md', content: '- t-1042 urgent: Checkout fails for every card (revenue is lost while it lasts)\n- t-1043 normal: How do I export invoices? (a how-to question)\n' } }],
          usage: { inputTokens: 1250, outputTokens: 70 },
        },
        {
          text: 'Both threads are classified and drafted.',
          toolCalls: [
            {
              name: 'finish',
              arguments: {
                summary: 'Triaged 2 threads: t-1042 urgent (checkout failing), t-1043 normal (invoice export). Replies drafted in triage/replies/.',
                criteria: [
                  { criterion: 'every thread has a severity', met: true, evidence: 'triage/summary.md lists t-1042 urgent and t-1043 normal' },
                  { criterion: 'every thread has a drafted reply', met: true, evidence: 'triage/replies/t-1042.md and t-1043.md were written' },
                ],
              },
            },
          ],
          usage: { inputTokens: 1400, outputTokens: 110 },
        },
      ],
    },
  },
};
