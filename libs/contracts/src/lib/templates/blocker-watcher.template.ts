import type { WorkerTemplate } from './worker-template';

export const BLOCKER_WATCHER: WorkerTemplate = {
  id: 'blocker-watcher',
  version: 1,
  title: 'Blocker watcher',
  category: 'Operations',
  schedule: '0 9 * * 1-5',
  summary: 'Tracks unresolved blockers and prepares escalation notes for owners of critical items.',
  keywords: ['blocker', 'blockers', 'blocked', 'unresolved', 'stuck', 'escalation', 'escalate', 'owner', 'owners', 'critical', 'issues', 'issue', 'tracker', 'jira', 'watch', 'follow'],
  definition: `# Blocker watcher: on weekday mornings, lists the open issues labelled "blocker" in a GitHub
# repository, notes how long each has been open and who owns it, and prepares an escalation note
# for every critical one, to be sent only after approval. Store the GitHub token as github_token
# and set the repository in the github_api grant before deploying.
apiVersion: packetagent/v1
kind: Worker
name: blocker-watcher
description: Lists unresolved blockers and prepares escalation notes for the owners of critical ones.
model: { preset: default }
instructions: |
  Watch the blockers of the repository.
  1. List the open issues labelled "blocker" (GET /repos/<owner>/<repo>/issues?labels=blocker&state=open).
  2. For each, note its age in days, its owner (the assignee, or "nobody") and its last activity.
  3. A blocker is critical when it is older than 3 days or has no owner. For each critical one
     write blockers/escalations/<number>.md: a short, factual note to its owner (or the team lead
     when nobody owns it) saying what is blocked, since when, and the one decision needed.
  4. Write blockers/report.md: one line per blocker, critical ones first.
input:
  schema:
    type: object
    properties:
      blockers:
        type: array
        description: Blockers to review instead of listing them (a demo or a replay).
        items:
          type: object
          properties:
            number: { type: integer }
            title: { type: string }
            owner: { type: string }
            ageDays: { type: integer }
tools:
  - tool: github_api
    verbs: [GET]
    resources: ["https://api.github.com/repos/**"]
    approval: never
    credentials: [github_token]
  - tool: files
    verbs: [write, list]
    resources: ["blockers/**"]
    approval: never
budgets:
  perRunUsd: 0.3
bounds: { maxWallSeconds: 600, maxIterations: 10, maxToolCalls: 25, maxConcurrentRuns: 1 }
exit:
  finish:
    criteria:
      - every blocker is in the report
      - every critical blocker has an escalation note
triggers:
  - { name: weekday-morning, cron: "0 9 * * 1-5", timezone: UTC, missed: fire_once }
  - { manual: {} }
`,
  demo: {
    tools: ['files'],
    input: {
      blockers: [
        { number: 311, title: 'Staging database out of disk', owner: '', ageDays: 5 },
        { number: 327, title: 'Flaky login test blocks the release branch', owner: 'sam', ageDays: 1 },
      ],
    },
    script: {
      description: 'Two demo blockers, one critical.',
      pricing: { inputPerMTokUsd: 3, outputPerMTokUsd: 15 },
      turns: [
        {
          text: '#311 is 5 days old and has no owner: critical. Writing its escalation note.',
          toolCalls: [
            {
              name: 'files',
              arguments: {
                op: 'write',
                path: 'blockers/escalations/311.md',
                content: 'To the team lead:\n\n#311 "Staging database out of disk" has blocked staging for 5 days and nobody owns it. Decision needed: who takes it today, or whether to grow the volume now.\n',
              },
            },
          ],
          usage: { inputTokens: 900, outputTokens: 110 },
        },
        {
          text: 'Writing the report.',
          toolCalls: [
            { name: 'files', arguments: { op: 'write', path: 'blockers/report.md', content: '- #311 critical: Staging database out of disk (5 days, no owner)\n- #327: Flaky login test blocks the release branch (1 day, sam)\n' } },
          ],
          usage: { inputTokens: 1050, outputTokens: 80 },
        },
        {
          text: 'Done.',
          toolCalls: [
            {
              name: 'finish',
              arguments: {
                summary: '2 blockers, 1 critical (#311, no owner for 5 days); its escalation note is in blockers/escalations/311.md.',
                criteria: [
                  { criterion: 'every blocker is in the report', met: true, evidence: 'blockers/report.md lists #311 and #327' },
                  { criterion: 'every critical blocker has an escalation note', met: true, evidence: 'blockers/escalations/311.md was written' },
                ],
              },
            },
          ],
          usage: { inputTokens: 1150, outputTokens: 90 },
        },
      ],
    },
  },
};
