import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { templateScriptName, WORKER_TEMPLATES } from '@packetagent/contracts';
import { eventually } from '@packetagent/testing';
import { DEFAULT_SCRIPTED_PRICING, ModelCatalog } from './catalog';
import { abortableSleep } from './clock';
import { providerConfigFromEnv } from './config';
import type { ChatMessage, ModelRequest, ResolvedModel } from './provider.types';
import { ProviderRouter } from './router';
import { ScriptedAdapter, ScriptSource } from './scripted';

const SCRIPT = `
description: looks up the weather, then answers
pricing: { inputPerMTokUsd: 2, outputPerMTokUsd: 8 }
turns:
  - text: Let me check.
    toolCalls:
      - name: get_weather
        arguments: { city: Oslo }
      - name: get_time
    usage: { inputTokens: 100, outputTokens: 20 }
  - text: It is sunny in Oslo.
    stopReason: end_turn
`;

function modelFor(name: string): ResolvedModel {
  return { provider: 'scripted', model: name, entry: new ModelCatalog().scripted(name), scripted: true };
}

function requestWith(name: string, messages: ChatMessage[]): ModelRequest {
  return { model: modelFor(name), system: 'sys', messages, tools: [], maxOutputTokens: 100 };
}

const afterOneTurn: ChatMessage[] = [
  { role: 'user', content: 'weather?' },
  { role: 'assistant', content: 'Let me check.', toolCalls: [] },
  { role: 'tool', results: [] },
];

describe('the shipped templates\' demo scripts', () => {
  it.each(WORKER_TEMPLATES.map((template) => [template.id, template] as const))('%s loads with no scripts directory and answers its first turn', async (_id, template) => {
    const sut = new ScriptedAdapter(new ScriptSource());
    const turn = await sut.complete(requestWith(templateScriptName(template), [{ role: 'user', content: 'go' }]), {});
    expect(turn.toolCalls.length).toBeGreaterThan(0);
    expect(turn.usage.inputTokens).toBeGreaterThan(0);
  });
});

describe(ScriptedAdapter.name, () => {
  let scripts: ScriptSource;
  let sut: ScriptedAdapter;

  beforeEach(() => {
    scripts = new ScriptSource();
    scripts.register('weather', SCRIPT);
    sut = new ScriptedAdapter(scripts);
  });

  it('answers with the turn matching how many assistant turns the conversation holds', async () => {
    const first = await sut.complete(requestWith('weather', [{ role: 'user', content: 'weather?' }]), {});
    const second = await sut.complete(requestWith('weather', afterOneTurn), {});

    expect(first).toMatchObject({
      text: 'Let me check.',
      stopReason: 'tool_use',
      usage: { inputTokens: 100, outputTokens: 20 },
      toolCalls: [
        { id: 'call_0_0', name: 'get_weather', arguments: { city: 'Oslo' }, rawArguments: '{"city":"Oslo"}' },
        { id: 'call_0_1', name: 'get_time', arguments: {}, rawArguments: '{}' },
      ],
      native: { provider: 'scripted', model: 'weather', payload: { script: 'weather', turn: 0 } },
    });
    expect(second).toMatchObject({ text: 'It is sunny in Oslo.', toolCalls: [], stopReason: 'end_turn', usageEstimated: true });
  });

  it('answers with the turn the request names, whatever the conversation holds after a compaction', async () => {
    const compacted = await sut.complete({ ...requestWith('weather', [{ role: 'user', content: 'weather?' }]), turn: 1 }, {});

    expect(compacted).toMatchObject({ text: 'It is sunny in Oslo.', toolCalls: [] });
  });

  it('gives the same answer to the same conversation every time', async () => {
    const once = await sut.complete(requestWith('weather', afterOneTurn), {});
    const again = await sut.complete(requestWith('weather', afterOneTurn), {});

    expect(again).toEqual(once);
  });

  it('fails with script_exhausted when the conversation outgrows the script', async () => {
    const longer: ChatMessage[] = [...afterOneTurn, { role: 'assistant', content: 'It is sunny in Oslo.', toolCalls: [] }, { role: 'user', content: 'and?' }];

    await expect(sut.complete(requestWith('weather', longer), {})).rejects.toMatchObject({ code: 'script_exhausted', message: expect.stringContaining('2 turn(s)') });
  });

  it('passes string arguments through as raw model text, malformed when they are not an object', async () => {
    scripts.register('broken', { turns: [{ toolCalls: [{ name: 'get_weather', arguments: '{"city": ' }] }] });

    const turn = await sut.complete(requestWith('broken', []), {});

    expect(turn.toolCalls[0]).toMatchObject({ arguments: null, rawArguments: '{"city": ', malformed: expect.stringContaining('not valid JSON') });
  });

  it('holds the answer for delayMs and gives up as soon as the call is aborted', async () => {
    const waits: number[] = [];
    const holding = new ScriptedAdapter(scripts, {
      sleep: (ms, signal) => {
        waits.push(ms);
        return abortableSleep(ms, signal);
      },
    });
    scripts.register('slow', { turns: [{ text: 'late', delayMs: 60_000 }] });
    const controller = new AbortController();
    const started = Date.now();

    const call = holding.complete(requestWith('slow', []), { signal: controller.signal }).catch((e: unknown) => e);
    await eventually(() => waits.length === 1, { what: 'the scripted delay to start' });
    controller.abort();

    await expect(call).resolves.toMatchObject({ code: 'provider_aborted', provider: 'scripted' });
    expect(waits).toEqual([60_000]);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe(ScriptSource.name, () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'packetagent-scripts-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('loads <name>.yaml from the scripts directory', async () => {
    await writeFile(join(dir, 'greet.yaml'), 'turns:\n  - text: hello\n');
    const sut = new ScriptSource({ dir });

    await expect(sut.load('greet')).resolves.toEqual({ turns: [{ text: 'hello' }] });
  });

  it('parses a script once and again only after its file changed', async () => {
    const file = join(dir, 'greet.yaml');
    await writeFile(file, 'turns:\n  - text: hello\n');
    const sut = new ScriptSource({ dir });

    const first = await sut.load('greet');
    expect(await sut.load('greet')).toBe(first);
    await writeFile(file, 'turns:\n  - text: hello again\n');
    await utimes(file, new Date(), new Date(Date.now() + 5_000));
    await expect(sut.load('greet')).resolves.toEqual({ turns: [{ text: 'hello again' }] });
  });

  it.each(['../greet', 'greet.yaml', '/etc/passwd', 'Greet', '', '-greet', 'a'.repeat(64), 'g/r'])('refuses the script name %j before touching the disk', async (name) => {
    const sut = new ScriptSource({ dir });

    await expect(sut.load(name)).rejects.toMatchObject({ code: 'script_name_invalid' });
  });

  it('says which script is missing and where it looked', async () => {
    const sut = new ScriptSource({ dir });

    await expect(sut.load('absent')).rejects.toMatchObject({ code: 'script_not_found', message: expect.stringContaining('absent.yaml does not exist') });
    await expect(new ScriptSource().load('absent')).rejects.toMatchObject({ code: 'script_not_found', message: expect.stringContaining('PACKETAGENT_SCRIPTS_DIR') });
  });

  it('names the path of every problem in an invalid script', async () => {
    await writeFile(join(dir, 'bad.yaml'), 'turns:\n  - text: fine\n  - toolCalls:\n      - name: ""\n    delayMs: -1\n  - {}\nextra: 1\n');
    const sut = new ScriptSource({ dir });

    const error = await sut.load('bad').catch((e: unknown) => e);

    expect(error).toMatchObject({ code: 'script_invalid' });
    const message = (error as Error).message;
    expect(message).toContain('bad.yaml');
    expect(message).toContain('turns[1].toolCalls[0].name');
    expect(message).toContain('turns[1].delayMs');
    expect(message).toContain('turns[2]: a turn needs text or toolCalls');
    expect(message).toContain('(root): Unrecognized key: "extra"');
  });

  it('refuses text that is not YAML', async () => {
    const sut = new ScriptSource();

    expect(() => sut.register('yaml-broken', 'turns: [\n  - text: a')).toThrow(expect.objectContaining({ code: 'script_invalid' }));
  });
});

describe(ProviderRouter.name, () => {
  it('resolves a script only when named explicitly, priced from the script and labelled scripted', async () => {
    const scripts = new ScriptSource();
    scripts.register('weather', SCRIPT);
    scripts.register('plain', { turns: [{ text: 'hi', usage: { inputTokens: 1_000_000, outputTokens: 0 } }] });
    const sut = new ProviderRouter({ config: providerConfigFromEnv({}), keys: async () => undefined, scripts });

    const weather = await sut.resolve({ provider: 'scripted', model: 'weather' });
    const plain = await sut.resolve({ provider: 'scripted', model: 'plain' });
    const turn = await sut.complete({ model: weather, system: '', messages: [{ role: 'user', content: 'x' }], tools: [], maxOutputTokens: 100 });

    expect(weather).toMatchObject({ provider: 'scripted', scripted: true, entry: { origin: 'script', pricing: { inputPerMTokUsd: 2, outputPerMTokUsd: 8 } } });
    expect(plain.entry.pricing).toEqual(DEFAULT_SCRIPTED_PRICING);
    expect(turn).toMatchObject({ provider: 'scripted', model: 'weather', scripted: true, attempts: 1 });
    expect(turn.costUsd).toBeCloseTo((100 * 2 + 20 * 8) / 1e6, 12);
    await expect(sut.resolve({ provider: 'scripted', model: 'nope' })).rejects.toMatchObject({ code: 'script_not_found' });
  });
});
