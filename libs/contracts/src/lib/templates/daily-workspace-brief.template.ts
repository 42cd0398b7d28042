import type { WorkerTemplate } from './worker-template';

export const DAILY_WORKSPACE_BRIEF: WorkerTemplate = {
  id: 'daily-workspace-brief',
  version: 1,
  title: 'Daily workspace brief',
  category: 'Operations',
  schedule: '0 8 * * 1-5',
  summary: 'Composes a 5-line morning brief from workspace activity, blockers, questions, and validations.',
  keywords: ['daily', 'morning', 'brief', 'briefing', 'digest', 'summary', 'activity', 'standup', 'workspace', 'overview', 'report', 'weekday', 'weekdays'],
  definition: `# Daily workspace brief: on weekday mornings, reads yesterday's runs and open approvals from
# this PacketAgent's API and posts a five-line brief. Put this server's URL in the http_fetch
# grant, store an API key of this workspace (viewer role) as packetagent_api and the Slack
# webhook as brief_webhook before deploying.
apiVersion: packetagent/v1
kind: Worker
name: daily-workspace-brief
description: A five-line morning brief of what happened, what is blocked and what waits on someone.
model: { preset: default }
instructions: |
  Compose the morning brief of this workspace.
  1. Read the runs of the last 24 hours and the open approvals from the PacketAgent API.
  2. Write exactly five lines to brief/today.md: what finished, what failed and why, what is
     blocked, which questions wait on a person, and the one thing to look at first.
  3. Post the five lines to #daily-brief.
  Say so plainly when there is nothing to report; never invent activity.
input:
  schema:
    type: object
    properties:
      activity:
        type: string
        description: Activity to brief on instead of reading it from the API (a demo or a replay).
tools:
  - tool: http_fetch
    verbs: [GET]
    resources: ["https://packetagent.example.com/api/v1/**"]
    approval: never
    credentials: [packetagent_api]
  - tool: files
    verbs: [write]
    resources: ["brief/*"]
    approval: never
  - tool: slack_post
    resources: ["#daily-brief"]
    approval: never
    credentials: [brief_webhook]
budgets:
  perRunUsd: 0.2
  actions:
    slack_post: { perRun: 1 }
bounds: { maxWallSeconds: 300, maxIterations: 8, maxToolCalls: 12, maxConcurrentRuns: 1 }
exit:
  finish:
    criteria:
      - the brief has five lines
      - the brief is in brief/today.md
triggers:
  - { name: weekday-morning, cron: "0 8 * * 1-5", timezone: UTC, missed: fire_once }
  - { manual: {} }
`,
  demo: {
    tools: ['files'],
    input: { activity: '14 runs yesterday: 12 succeeded, 1 failed (invoice-sync: the bank API answered 503), 1 waits on approval (release-audit, 3 h). No open questions.' },
    script: {
      description: 'A brief of one demo day.',
      pricing: { inputPerMTokUsd: 3, outputPerMTokUsd: 15 },
      turns: [
        {
          text: 'Composing the brief from the activity given.',
          toolCalls: [
            {
              name: 'files',
              arguments: {
                op: 'write',
                path: 'brief/today.md',
                content:
                  'Finished: 12 of 14 runs succeeded.\nFailed: invoice-sync, the bank API answered 503.\nBlocked: nothing.\nWaiting on a person: release-audit approval, open for 3 hours.\nFirst: approve or reject the release-audit call.\n',
              },
            },
          ],
          usage: { inputTokens: 700, outputTokens: 95 },
        },
        {
          text: 'The brief is written.',
          toolCalls: [
            {
              name: 'finish',
              arguments: {
                summary: 'Wrote the five-line brief to brief/today.md.',
                criteria: [
                  { criterion: 'the brief has five lines', met: true, evidence: 'brief/today.md has five lines' },
                  { criterion: 'the brief is in brief/today.md', met: true, evidence: 'brief/today.md was written' },
                ],
              },
            },
          ],
          usage: { inputTokens: 850, outputTokens: 90 },
        },
      ],
    },
  },
};
