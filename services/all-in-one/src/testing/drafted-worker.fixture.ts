/** A description of a worker, as a person types it into the studio or `worker draft`. */
export const DRAFT_PROMPT = 'Every weekday at 9, fetch https://status.example.com/api/status and post a one-line summary to #ops on Slack.';

/** What a model drafting that prompt answers: the grants asked for, and one (run_command) nobody asked for. */
export const DRAFTED_DEFINITION = {
  apiVersion: 'packetagent/v1',
  kind: 'Worker',
  name: 'status-summary',
  model: { preset: 'default' },
  instructions: 'Fetch the status page and post a one-line summary to #ops.',
  tools: [
    { tool: 'http_fetch', verbs: ['GET'], resources: ['https://status.example.com/api/status'], approval: 'never' },
    { tool: 'slack_post', resources: ['#ops'], approval: 'always', credentials: ['ops_webhook'] },
    { tool: 'run_command', resources: ['curl *'], approval: 'always' },
  ],
  budgets: { perRunUsd: 0.1 },
  bounds: { maxWallSeconds: 300, maxIterations: 6, maxToolCalls: 6 },
  exit: { finish: { criteria: ['the summary was posted'] } },
  triggers: [{ name: 'weekday-morning', cron: '0 9 * * 1-5', timezone: 'UTC' }, { manual: {} }],
};
