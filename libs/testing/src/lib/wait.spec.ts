import { eventually } from './wait';

describe(eventually.name, () => {
  it('returns the first value that is not false or undefined', async () => {
    let calls = 0;
    await expect(eventually(() => (++calls >= 3 ? calls : false), { intervalMs: 1 })).resolves.toBe(3);
  });

  it('fails at the deadline naming what it waited for and the last value', async () => {
    await expect(eventually(() => false, { timeoutMs: 30, intervalMs: 5, what: 'the moon' })).rejects.toThrow(
      'timed out waiting for the moon; last: false',
    );
  });

  it('keeps polling through errors and reports the last one', async () => {
    await expect(
      eventually(() => {
        throw new Error('not yet');
      }, { timeoutMs: 30, intervalMs: 5 }),
    ).rejects.toThrow('last: not yet');
  });
});
