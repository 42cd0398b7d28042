import { parse as parseYaml } from 'yaml';
import { DefinitionError } from '../worker-definition/errors';
import { parseWorkerDefinition } from '../worker-definition/parse';
import { findTemplate, instantiateTemplate, templateScript, templateScriptName, WORKER_TEMPLATES } from './index';

describe('WORKER_TEMPLATES', () => {
  it('ships the six starters with the schedules the gallery promises', () => {
    expect(WORKER_TEMPLATES.map((template) => [template.id, template.schedule])).toEqual([
      ['support-inbox-triage', '*/15 * * * *'],
      ['daily-workspace-brief', '0 8 * * 1-5'],
      ['release-audit', null],
      ['blocker-watcher', '0 9 * * 1-5'],
      ['weekly-release-notes', '0 16 * * 5'],
      ['research-summarizer', null],
    ]);
  });

  it.each(WORKER_TEMPLATES.map((template) => [template.id, template] as const))('%s is a valid definition named after itself, its cron trigger matching its schedule', (id, template) => {
    const definition = parseWorkerDefinition(template.definition, 'yaml');
    expect(definition.name).toBe(id);
    expect(definition.model).toMatchObject({ preset: 'default' });
    const crons = definition.triggers.flatMap((trigger) => ('cron' in trigger ? [trigger.cron] : []));
    expect(crons).toEqual(template.schedule ? [template.schedule] : []);
    expect(definition.triggers.some((trigger) => 'manual' in trigger)).toBe(true);
  });

  it.each(WORKER_TEMPLATES.map((template) => [template.id, template] as const))("%s's demo calls only tools its demo keeps, and finishes meeting every criterion", (_id, template) => {
    const definition = parseWorkerDefinition(template.definition, 'yaml');
    const script = template.demo.script as { turns: { toolCalls?: { name: string; arguments: Record<string, unknown> }[] }[] };
    const called = new Set(script.turns.flatMap((turn) => (turn.toolCalls ?? []).map((call) => call.name)));
    for (const name of called) expect([...template.demo.tools, 'finish']).toContain(name);
    for (const tool of template.demo.tools) expect(definition.tools.map((grant) => grant.tool)).toContain(tool);
    const finish = script.turns.at(-1)!.toolCalls!.find((call) => call.name === 'finish')!;
    const criteria = (finish.arguments['criteria'] as { criterion: string; met: boolean }[]).map((entry) => [entry.criterion, entry.met]);
    expect(criteria).toEqual(('finish' in definition.exit ? definition.exit.finish.criteria : []).map((criterion) => [criterion, true]));
  });
});

describe(instantiateTemplate.name, () => {
  const template = findTemplate('support-inbox-triage')!;

  it('renames the template and keeps the document as written, comments included', () => {
    const sut = instantiateTemplate(template, { name: 'acme-support' });
    expect(sut.definition.name).toBe('acme-support');
    expect(sut.source).toContain('# Support inbox triage: every 15 minutes');
    expect(sut.source).toContain('name: acme-support');
    expect(sut.source.indexOf('apiVersion')).toBeLessThan(sut.source.indexOf('tools:'));
  });

  it('replaces each overridden field whole', () => {
    const sut = instantiateTemplate(template, { name: 'acme-support', overrides: { bounds: { maxIterations: 4 }, instructions: 'Only classify.' } });
    expect(sut.definition.instructions).toBe('Only classify.');
    expect(sut.definition.bounds).toMatchObject({ maxIterations: 4, maxWallSeconds: 600 });
  });

  it('refuses an override of a field an instantiation may not replace, and an invalid result, at their paths', () => {
    expect(() => instantiateTemplate(template, { name: 'acme-support', overrides: { kind: 'Other' } as never })).toThrow(expect.objectContaining({ issues: [expect.objectContaining({ path: 'overrides.kind' })] }));
    let error: unknown;
    try {
      instantiateTemplate(template, { name: 'Not A Name' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(DefinitionError);
    expect((error as DefinitionError).issues.map((issue) => issue.path)).toContain('name');
  });

  it('makes a demo that replays its script, keeps only credential-free grants, starts by hand and says so', () => {
    const sut = instantiateTemplate(template, { name: 'triage-demo', demo: true });
    expect(sut.definition.model).toEqual({ provider: 'scripted', model: templateScriptName(template), maxOutputTokens: 1024 });
    expect(sut.definition.tools.map((grant) => grant.tool)).toEqual(['files']);
    expect(sut.definition.tools.flatMap((grant) => grant.credentials)).toEqual([]);
    expect(sut.definition.triggers).toEqual([{ manual: {} }]);
    expect(sut.source.split('\n')[0]).toMatch(/^# Demo: the model is the scripted provider/);
    expect(parseYaml(sut.source)).toMatchObject({ name: 'triage-demo' });
  });
});

describe(templateScript.name, () => {
  it('finds a demo script by its scripted model name, and nothing for other names', () => {
    expect(templateScript('template-release-audit')).toBe(findTemplate('release-audit')!.demo.script);
    expect(templateScript('template-nope')).toBeUndefined();
    expect(templateScript('health-report')).toBeUndefined();
  });
});
