import { axisLabels, bucketLabel, linePoints, niceMax, stackedBars } from './trend-geometry';

describe(niceMax.name, () => {
  it('rounds the largest value up to 1, 2 or 5 times a power of ten, and is never zero', () => {
    expect([niceMax([0]), niceMax([]), niceMax([3]), niceMax([7]), niceMax([12]), niceMax([0.03]), niceMax([100])]).toEqual([1, 1, 5, 10, 20, 0.05, 100]);
  });
});

describe(stackedBars.name, () => {
  it('stacks each series on the ones before it, bucket by bucket', () => {
    const [ok, failed] = stackedBars([[1, 0], [1, 2]], 4, 100, 40, 0);
    expect(ok).toEqual([{ x: 0, y: 30, width: 50, height: 10 }, { x: 50, y: 40, width: 50, height: 0 }]);
    expect(failed).toEqual([{ x: 0, y: 20, width: 50, height: 10 }, { x: 50, y: 20, width: 50, height: 20 }]);
  });

  it('leaves gaps between bars and draws nothing without buckets', () => {
    expect(stackedBars([[2]], 2, 100, 10)[0]![0]).toEqual({ x: 12.5, y: 0, width: 75, height: 10 });
    expect(stackedBars([[]], 1, 100, 10)).toEqual([[]]);
  });
});

describe(linePoints.name, () => {
  it('runs through the middle of each bucket', () => {
    expect(linePoints([0, 2, 4], 4, 30, 10)).toBe('5,10 15,5 25,0');
    expect(linePoints([], 1, 30, 10)).toBe('');
  });
});

describe(axisLabels.name, () => {
  it('labels a few buckets, always the latest, as UTC hours or days', () => {
    const hours = Array.from({ length: 24 }, (_, i) => new Date(Date.UTC(2026, 10, 30, i)).toISOString());
    expect(axisLabels(hours, 'hour')).toEqual([
      { index: 5, text: '05:00' },
      { index: 11, text: '11:00' },
      { index: 17, text: '17:00' },
      { index: 23, text: '23:00' },
    ]);
    expect(bucketLabel('2026-11-30T00:00:00.000Z', 'day')).toBe('Nov 30');
  });
});
