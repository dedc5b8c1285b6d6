import { describe, expect, it } from 'vitest';
import { isoFromUtcText } from '../../common/db/index.js';

describe('isoFromUtcText', () => {
  it('prints what toISOString prints for the same instant, whatever the fraction', () => {
    const cases: [string, string][] = [
      ['2026-11-23 08:37:00', '2026-11-23T08:37:00.000Z'],
      ['2026-11-23 08:37:00.1', '2026-11-23T08:37:00.100Z'],
      ['2026-11-23 08:37:00.12', '2026-11-23T08:37:00.120Z'],
      ['2026-11-23 08:37:00.123456', '2026-11-23T08:37:00.123Z'],
      ['1999-01-02 03:04:05.999999', '1999-01-02T03:04:05.999Z'],
    ];
    for (const [text, iso] of cases) {
      expect(isoFromUtcText(text)).toBe(iso);
      expect(new Date(`${text.replace(' ', 'T')}Z`).toISOString()).toBe(iso);
    }
  });
});
