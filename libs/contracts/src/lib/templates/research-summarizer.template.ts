import type { WorkerTemplate } from './worker-template';

export const RESEARCH_SUMMARIZER: WorkerTemplate = {
  id: 'research-summarizer',
  version: 1,
  title: 'Research summarizer',
  category: 'Research',
  schedule: null,
  summary: 'Reads a URL, returns a structured summary with key findings, risks, and follow-up questions.',
  keywords: ['research', 'summarize', 'summarise', 'summary', 'summarizer', 'read', 'url', 'article', 'paper', 'page', 'web', 'website', 'findings', 'risks', 'questions', 'analyze', 'analyse'],
  definition: `# Research summarizer: started on demand with a URL; reads the page and answers a structured
# summary (key findings, risks, follow-up questions). It reads only; it posts nothing. It may
# read only the sites its http_fetch grant names: add the ones your team reads.
apiVersion: packetagent/v1
kind: Worker
name: research-summarizer
description: Reads a URL and returns key findings, risks and follow-up questions.
model: { preset: default }
instructions: |
  Summarise the page at the input's URL for a busy reader.
  Fetch it, read it, and answer with at most five key findings (each one sentence, with the
  figure or quote it rests on), the risks or weaknesses of the source, and three follow-up
  questions worth asking. Keep the summary in summary.md as well. Never state what the page
  does not say.
input:
  schema:
    type: object
    properties:
      url: { type: string, description: The page to summarise (https) }
      text: { type: string, description: The text to summarise instead of fetching it (a demo or a replay) }
output:
  schema:
    type: object
    required: [findings, risks, questions]
    properties:
      findings: { type: array, items: { type: string }, maxItems: 5 }
      risks: { type: array, items: { type: string } }
      questions: { type: array, items: { type: string } }
tools:
  - tool: http_fetch
    verbs: [GET]
    resources: ["https://arxiv.org/**", "https://*.wikipedia.org/**"]
    approval: never
  - tool: files
    verbs: [write]
    resources: ["summary.md"]
    approval: never
budgets:
  perRunUsd: 0.3
bounds: { maxWallSeconds: 300, maxIterations: 6, maxToolCalls: 8, maxConcurrentRuns: 5 }
exit:
  finish:
    criteria:
      - every finding rests on something the page says
      - there are three follow-up questions
triggers:
  - { manual: {} }
`,
  demo: {
    tools: ['files'],
    input: {
      text: 'A 2026 survey of 412 operations teams found that 61% run at least one scheduled LLM worker; teams with human approval on outbound actions reported 3x fewer incidents. The survey was run by a vendor of approval tooling; 38% of respondents were its customers.',
    },
    script: {
      description: 'A summary of a short demo text.',
      pricing: { inputPerMTokUsd: 3, outputPerMTokUsd: 15 },
      turns: [
        {
          text: 'Writing the summary of the text given.',
          toolCalls: [
            {
              name: 'files',
              arguments: {
                op: 'write',
                path: 'summary.md',
                content:
                  '## Findings\n- 61% of 412 surveyed operations teams run at least one scheduled LLM worker.\n- Teams with approval on outbound actions reported 3x fewer incidents.\n\n## Risks\n- The survey was run by a vendor of approval tooling.\n- 38% of respondents were its customers.\n\n## Questions\n- How was an incident defined?\n- What do the non-customers alone show?\n- Is the 3x a correlation within teams of similar size?\n',
              },
            },
          ],
          usage: { inputTokens: 600, outputTokens: 170 },
        },
        {
          text: 'Done.',
          toolCalls: [
            {
              name: 'finish',
              arguments: {
                summary: 'Summarised the text: 2 findings, 2 risks, 3 questions (also in summary.md).',
                output: {
                  findings: ['61% of 412 surveyed operations teams run at least one scheduled LLM worker.', 'Teams with approval on outbound actions reported 3x fewer incidents.'],
                  risks: ['The survey was run by a vendor of approval tooling.', '38% of respondents were its customers.'],
                  questions: ['How was an incident defined?', 'What do the non-customers alone show?', 'Is the 3x a correlation within teams of similar size?'],
                },
                criteria: [
                  { criterion: 'every finding rests on something the page says', met: true, evidence: 'both findings quote the figures of the text' },
                  { criterion: 'there are three follow-up questions', met: true, evidence: 'three questions in the output and summary.md' },
                ],
              },
            },
          ],
          usage: { inputTokens: 800, outputTokens: 220 },
        },
      ],
    },
  },
};
