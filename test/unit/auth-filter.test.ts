// An `on` handler's filter compiled to the containment pattern the stores apply in SQL.
import { describe, expect, it } from 'vitest';
import { compileFilter } from '../../runtime/auth/index.js';

describe('compileFilter', () => {
  it('turns values, $eq and $contains into one containment pattern', () => {
    expect(
      compileFilter({
        owner: 'alice',
        team: { $eq: 'qa' },
        tags: { $contains: 'red' },
        roles: { $contains: ['a', 'b'] },
        nested: { deep: 1 },
      }),
    ).toEqual({
      owner: 'alice',
      team: 'qa',
      tags: ['red'],
      roles: ['a', 'b'],
      nested: { deep: 1 },
    });
  });

  it('refuses operators it cannot apply instead of ignoring them', () => {
    expect(() => compileFilter({ n: { $gt: 3 } })).toThrow(/unsupported filter for "n"/);
    expect(() => compileFilter({ n: { $eq: 1, $contains: 2 } })).toThrow(/unsupported/);
  });
});
