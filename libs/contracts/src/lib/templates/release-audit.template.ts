import type { WorkerTemplate } from './worker-template';

export const RELEASE_AUDIT: WorkerTemplate = {
  id: 'release-audit',
  version: 1,
  title: 'Release audit',
  category: 'Release',
  schedule: null,
  summary: 'Verifies validation evidence and release confirmation; blocks if required evidence is missing.',
  keywords: ['release', 'audit', 'verify', 'validation', 'evidence', 'checklist', 'ship', 'deploy', 'deployment', 'gate', 'approval', 'confirm', 'compliance', 'tag', 'version'],
  definition: `# Release audit: started on demand with a release's evidence; checks each required item and
# either confirms the release or blocks it, naming what is missing. It never approves a release
# whose evidence is incomplete. Store the GitHub token as github_token before deploying.
apiVersion: packetagent/v1
kind: Worker
name: release-audit
description: Checks a release's validation evidence and confirms it, or blocks it naming what is missing.
model: { preset: default }
instructions: |
  Audit the release named in the input.
  Required evidence: the test run passed, the changelog has an entry for the version, a person
  confirmed the release, and no blocker is open. Read the evidence given in the input; where it
  names a pull request or a check run, read it through the GitHub API.
  Write audit/<version>.md with one line per required item: met or missing, and where you saw it.
  The verdict is "confirmed" only when every item is met; otherwise "blocked" with what is missing.
input:
  schema:
    type: object
    required: [version]
    properties:
      version: { type: string, description: The release version, e.g. 2.4.0 }
      evidence:
        type: array
        items: { type: string }
        description: What the release team collected (test run URLs, changelog lines, confirmations).
output:
  schema:
    type: object
    required: [verdict, missing]
    properties:
      verdict: { type: string, enum: [confirmed, blocked] }
      missing: { type: array, items: { type: string } }
tools:
  - tool: github_api
    verbs: [GET]
    resources: ["https://api.github.com/repos/**"]
    approval: never
    credentials: [github_token]
  - tool: files
    verbs: [write]
    resources: ["audit/*"]
    approval: never
budgets:
  perRunUsd: 0.5
bounds: { maxWallSeconds: 900, maxIterations: 10, maxToolCalls: 20, maxConcurrentRuns: 2 }
exit:
  finish:
    criteria:
      - every required item is marked met or missing
      - the verdict is confirmed only if every item is met
triggers:
  - { manual: {} }
`,
  demo: {
    tools: ['files'],
    input: { version: '2.4.0', evidence: ['CI run 8812 passed', 'CHANGELOG.md has ## 2.4.0', 'confirmed by the release manager in #releases'] },
    script: {
      description: 'An audit of demo release 2.4.0 with one blocker left open.',
      pricing: { inputPerMTokUsd: 3, outputPerMTokUsd: 15 },
      turns: [
        {
          text: 'Three of four items are evidenced; nothing says no blocker is open, so the release is blocked.',
          toolCalls: [
            {
              name: 'files',
              arguments: {
                op: 'write',
                path: 'audit/2.4.0.md',
                content: '- tests passed: met (CI run 8812 passed)\n- changelog entry: met (CHANGELOG.md has ## 2.4.0)\n- release confirmed: met (release manager in #releases)\n- no open blocker: missing (no evidence given)\n\nVerdict: blocked\n',
              },
            },
          ],
          usage: { inputTokens: 1000, outputTokens: 140 },
        },
        {
          text: 'Audit written.',
          toolCalls: [
            {
              name: 'finish',
              arguments: {
                summary: 'Release 2.4.0 blocked: no evidence that no blocker is open.',
                output: { verdict: 'blocked', missing: ['no open blocker'] },
                criteria: [
                  { criterion: 'every required item is marked met or missing', met: true, evidence: 'audit/2.4.0.md has four items, each met or missing' },
                  { criterion: 'the verdict is confirmed only if every item is met', met: true, evidence: 'one item is missing and the verdict is blocked' },
                ],
              },
            },
          ],
          usage: { inputTokens: 1200, outputTokens: 120 },
        },
      ],
    },
  },
};
