import type { WorkerTemplate } from './worker-template';

export const WEEKLY_RELEASE_NOTES: WorkerTemplate = {
  id: 'weekly-release-notes',
  version: 1,
  title: 'Weekly release notes',
  category: 'Comms',
  schedule: '0 16 * * 5',
  summary: 'Drafts customer-facing release notes from completed plan items and validation evidence.',
  keywords: ['weekly', 'release', 'notes', 'changelog', 'customer', 'customers', 'announcement', 'announce', 'newsletter', 'friday', 'shipped', 'completed', 'comms', 'communication', 'draft', 'write'],
  definition: `# Weekly release notes: on Friday afternoons, reads the pull requests merged this week and
# drafts customer-facing release notes for a person to review; it emails the draft to the
# product owner only after approval. Store the GitHub token as github_token and the SMTP
# configuration as release_mail before deploying.
apiVersion: packetagent/v1
kind: Worker
name: weekly-release-notes
description: Drafts the week's customer-facing release notes from merged work.
model: { preset: default }
instructions: |
  Draft this week's release notes.
  1. Read the pull requests merged in the last 7 days (GitHub search API) and keep those a
     customer would notice: features, fixes of visible bugs, performance, removals.
  2. Write notes/release-notes.md: a title with the week, then "New", "Improved" and "Fixed"
     sections, one plain sentence per item, no internal names, no ticket numbers.
  3. Email the draft to product@example.com for review.
input:
  schema:
    type: object
    properties:
      merged:
        type: array
        items: { type: string }
        description: Titles of merged work to write about instead of reading them (a demo or a replay).
tools:
  - tool: github_api
    verbs: [GET]
    resources: ["https://api.github.com/search/**", "https://api.github.com/repos/**"]
    approval: never
    credentials: [github_token]
  - tool: files
    verbs: [write]
    resources: ["notes/*"]
    approval: never
  - tool: email_send
    resources: ["product@example.com"]
    approval: always
    credentials: [release_mail]
budgets:
  perRunUsd: 0.5
  actions:
    email_send: { perRun: 1 }
bounds: { maxWallSeconds: 900, maxIterations: 10, maxToolCalls: 20, maxConcurrentRuns: 1 }
exit:
  finish:
    criteria:
      - the notes have New, Improved and Fixed sections
      - no internal name or ticket number is in the notes
triggers:
  - { name: friday-afternoon, cron: "0 16 * * 5", timezone: UTC, missed: skip }
  - { manual: {} }
`,
  demo: {
    tools: ['files'],
    input: { merged: ['feat: CSV export of invoices (PAY-221)', 'perf: search answers in half the time', 'fix: dark mode lost after sign-in', 'chore: bump eslint'] },
    script: {
      description: 'Notes for one demo week.',
      pricing: { inputPerMTokUsd: 3, outputPerMTokUsd: 15 },
      turns: [
        {
          text: 'Three of the four items are visible to customers; the eslint bump is not.',
          toolCalls: [
            {
              name: 'files',
              arguments: {
                op: 'write',
                path: 'notes/release-notes.md',
                content: "# This week's release\n\n## New\n- Export all your invoices as one CSV file.\n\n## Improved\n- Search answers in half the time.\n\n## Fixed\n- Dark mode now stays on after you sign in.\n",
              },
            },
          ],
          usage: { inputTokens: 800, outputTokens: 130 },
        },
        {
          text: 'The draft is ready for review.',
          toolCalls: [
            {
              name: 'finish',
              arguments: {
                summary: 'Drafted release notes with 3 items in notes/release-notes.md.',
                criteria: [
                  { criterion: 'the notes have New, Improved and Fixed sections', met: true, evidence: 'notes/release-notes.md has the three sections' },
                  { criterion: 'no internal name or ticket number is in the notes', met: true, evidence: 'PAY-221 and the eslint bump were left out' },
                ],
              },
            },
          ],
          usage: { inputTokens: 950, outputTokens: 90 },
        },
      ],
    },
  },
};
