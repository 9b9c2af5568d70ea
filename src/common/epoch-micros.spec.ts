import { isoFromEpochMicros, MAX_EPOCH_MICROS, parseEpochMicros } from './epoch-micros.js';

describe('epoch microseconds', () => {
  it('turns microseconds into the exact ISO time, to the last of the four-digit years', () => {
    expect(isoFromEpochMicros(0n)).toBe('1970-01-01T00:00:00.000000Z');
    expect(isoFromEpochMicros(1_764_800_000_123_456n)).toBe('2025-12-03T22:13:20.123456Z');
    expect(isoFromEpochMicros(MAX_EPOCH_MICROS)).toBe('9999-12-31T23:59:59.999999Z');
    expect(() => isoFromEpochMicros(MAX_EPOCH_MICROS + 1n)).toThrow(RangeError);
  });

  it('reads only digits within that range', () => {
    expect(parseEpochMicros('1764800000123456')).toBe(1_764_800_000_123_456n);
    expect(parseEpochMicros(String(MAX_EPOCH_MICROS))).toBe(MAX_EPOCH_MICROS);
    for (const bad of ['', '-1', '1.5', '+1', '1e6', '253402300800000000', '2025-01-01', 1, null]) {
      expect(parseEpochMicros(bad)).toBeNull();
    }
  });
});
