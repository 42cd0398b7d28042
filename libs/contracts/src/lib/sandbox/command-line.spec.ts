import { commandArguments } from './command-line';

describe(commandArguments.name, () => {
  it.each([
    ['npm test', ['npm', 'test']],
    ['  git   status\t--short ', ['git', 'status', '--short']],
    ['node -e "console.log(1 + 1)"', ['node', '-e', 'console.log(1 + 1)']],
    ["grep -r 'two words' src", ['grep', '-r', 'two words', 'src']],
    ['echo "it\'s" \'say "hi"\'', ['echo', "it's", 'say "hi"']],
    ['printf ""', ['printf', '']],
    ['a"b c"d', ['ab cd']],
  ])('splits %j into its arguments, keeping quoted spaces and expanding nothing', (line, argv) => {
    expect(commandArguments(line)).toEqual({ ok: true, argv });
  });

  it('refuses an unterminated quote and an empty line', () => {
    expect(commandArguments('node -e "oops')).toEqual({ ok: false, message: 'unterminated " quote' });
    expect(commandArguments('   ')).toEqual({ ok: false, message: 'empty' });
  });
});
