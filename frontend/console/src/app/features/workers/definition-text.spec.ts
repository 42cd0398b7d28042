import { parse } from 'yaml';
import { definitionText } from './definition-text';

describe(definitionText.name, () => {
  it('shows the document as written when the version keeps its source text', () => {
    const sourceText = '# my worker\napiVersion: packetagent/v1\nkind: Worker\nname: a\n';
    expect(definitionText({ definition: { name: 'a' }, source: { format: 'yaml', text: sourceText } })).toBe(sourceText);
  });

  it('renders a stored definition as YAML in the order a definition is written, not key-sorted JSON', () => {
    const definition = {
      bounds: { maxWallSeconds: 600 },
      exit: { finish: { criteria: ['done'] } },
      instructions: 'Do it.\nThen finish.',
      kind: 'Worker',
      apiVersion: 'packetagent/v1',
      name: 'reporter',
      tools: [{ approval: 'always', resources: ['#ops'], tool: 'slack_post' }],
      zExtension: true,
    };

    const sut = definitionText({ definition, source: null });

    expect(sut.split('\n').filter((line) => /^\S/.test(line)).map((line) => line.split(':')[0])).toEqual(['apiVersion', 'kind', 'name', 'instructions', 'tools', 'bounds', 'exit', 'zExtension']);
    expect(sut).toContain('  - tool: slack_post\n    resources:\n      - "#ops"\n    approval: always');
    expect(sut).not.toContain('{');
    expect(parse(sut)).toEqual(definition);
  });
});
