import { parseWorkerDefinition } from '../worker-definition/parse';
import { withoutUnaskedGrants } from './asked-tools';
import { draftFromWords } from './draft-from-words';
import { cronFromWords, onDemandOnly } from './schedule-words';

describe(draftFromWords.name, () => {
  it('drafts a valid definition from the closest template, named from the words, with the request in its instructions', () => {
    const sut = draftFromWords('Triage the support inbox every 15 minutes and post urgent tickets to #support-oncall on Slack');
    const definition = parseWorkerDefinition(sut.source, 'yaml');
    expect(sut.template.id).toBe('support-inbox-triage');
    expect(definition.name).toBe('triage-support-inbox-minutes');
    expect(definition.instructions).toContain('What was asked: Triage the support inbox every 15 minutes');
    expect(definition.triggers).toEqual([{ name: 'schedule', cron: '*/15 * * * *', timezone: 'UTC', missed: 'skip' }, { manual: {} }]);
    expect(sut.source.split('\n')[0]).toBe('# Drafted without a model from the "Support inbox triage" template and the words of the request.');
  });

  it('grants no tool the request did not ask for, and says which it left out', () => {
    const sut = draftFromWords('Summarize the research paper at https://arxiv.org/abs/2401.00001 on demand');
    const definition = parseWorkerDefinition(sut.source, 'yaml');
    expect(sut.template.id).toBe('research-summarizer');
    expect(definition.tools.map((grant) => grant.tool)).toEqual(['http_fetch', 'files']);
    expect(definition.triggers).toEqual([{ manual: {} }]);

    const quiet = draftFromWords('Every friday at 4 pm draft customer release notes');
    const notes = parseWorkerDefinition(quiet.source, 'yaml');
    expect(quiet.template.id).toBe('weekly-release-notes');
    expect(notes.tools.map((grant) => grant.tool)).toEqual(['files']);
    expect(quiet.removedGrants.map((removed) => removed.tool)).toEqual(['github_api', 'email_send']);
    expect(notes.triggers[0]).toMatchObject({ cron: '0 16 * * 5' });
  });

  it('is deterministic, and says so when nothing matches a template', () => {
    const prompt = 'Water the office plants';
    expect(draftFromWords(prompt)).toEqual(draftFromWords(prompt));
    expect(draftFromWords(prompt).notes[0]).toMatch(/nothing in the request matches a template/);
    expect(() => parseWorkerDefinition(draftFromWords(prompt).source, 'yaml')).not.toThrow();
  });
});

describe(cronFromWords.name, () => {
  it.each([
    ['every 15 minutes', '*/15 * * * *'],
    ['hourly', '0 * * * *'],
    ['every 6 hours', '0 */6 * * *'],
    ['every weekday at 8', '0 8 * * 1-5'],
    ['on weekdays at 9:30 am', '30 9 * * 1-5'],
    ['every friday at 4 pm', '0 16 * * 5'],
    ['every monday', '0 9 * * 1'],
    ['daily at 7:15', '15 7 * * *'],
    ['every morning', '0 9 * * *'],
    ['weekly', '0 9 * * 1'],
    ['when I ask', null],
  ])('reads "%s" as %s', (words, cron) => {
    expect(cronFromWords(words)).toBe(cron);
  });

  it('tells an on-demand request', () => {
    expect(onDemandOnly('Summarise a page on demand')).toBe(true);
    expect(onDemandOnly('Summarise a page every day')).toBe(false);
  });
});

describe(withoutUnaskedGrants.name, () => {
  it('removes grants of tools the request does not ask for, and leaves what is not a grant list to the validator', () => {
    const drafted = { name: 'x', tools: [{ tool: 'slack_post' }, { tool: 'run_command' }, { tool: 'finish' }, 'junk'] };
    const sut = withoutUnaskedGrants(drafted, 'post the summary to #ops on Slack');
    expect(sut.value).toEqual({ name: 'x', tools: [{ tool: 'slack_post' }, { tool: 'finish' }, 'junk'] });
    expect(sut.removed).toEqual([{ tool: 'run_command', reason: 'the request does not ask for what run_command does' }]);
    expect(withoutUnaskedGrants('not an object', 'x')).toEqual({ value: 'not an object', removed: [] });
  });
});
