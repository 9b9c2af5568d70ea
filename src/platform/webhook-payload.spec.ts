import { dailyLimitOf } from './webhook-payload.js';

describe('dailyLimitOf', () => {
  it('reads a number, a tier, or unlimited; anything else is unread', () => {
    expect(dailyLimitOf(2000)).toBe(2000);
    expect(dailyLimitOf('TIER_1K')).toBe(1000);
    expect(dailyLimitOf('TIER_250')).toBe(250);
    expect(dailyLimitOf('TIER_100K')).toBe(100_000);
    expect(dailyLimitOf('TIER_UNLIMITED')).toBeNull();
    expect(dailyLimitOf('TIER_X')).toBeUndefined();
    expect(dailyLimitOf(-1)).toBeNull();
    expect(dailyLimitOf(-2)).toBeUndefined();
    expect(dailyLimitOf(1.5)).toBeUndefined();
    expect(dailyLimitOf(undefined)).toBeUndefined();
  });
});
