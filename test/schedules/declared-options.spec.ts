import { InvalidOptionError, resolveModuleSettings, Schedule } from '@app/echomq/internal';

/** The module option `schedules` and @Schedule are checked when they are read, before any Redis call. */
describe('schedules: declared schedules are checked at boot', () => {
  const connection = { url: 'redis://127.0.0.1:1' };
  const refused = (schedules: unknown): string => {
    try {
      resolveModuleSettings({ connection, schedules } as never);
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidOptionError);
      return (error as Error).message;
    }
    throw new Error('accepted');
  };

  it('accepts well-formed entries', () => {
    expect(() =>
      resolveModuleSettings({
        connection,
        schedules: [
          { queue: 'a', key: 'k', cron: '0 * * * *', tz: 'Europe/Berlin' },
          { queue: 'b', key: 'k', everyMs: 1_000, missed: 'skip', template: { data: { x: 1 }, priority: 2 } },
        ],
      }),
    ).not.toThrow();
  });

  it('names the entry that is wrong', () => {
    expect(refused('nope')).toContain('schedules');
    expect(refused([{ queue: 'bad queue!', key: 'k', everyMs: 1 }])).toContain('schedules[0].queue');
    expect(refused([{ queue: 'q', key: 'k', cron: 'never' }])).toContain('schedules[0]');
    expect(refused([{ queue: 'q', key: 'k', everyMs: 1_000, template: { lane: 'a b' } }])).toContain('lane');
    const twice = [
      { queue: 'q', key: 'k', everyMs: 1_000 },
      { queue: 'q', key: 'k', everyMs: 2_000 },
    ];
    expect(refused(twice)).toContain('schedules[1]');
  });

  it('@Schedule refuses a bad spec when the class is defined', () => {
    expect(() => Schedule('k', { cron: '99 * * * *' })).toThrow(/cron/);
    expect(() => Schedule('bad key', { everyMs: 1_000 })).toThrow(/schedule key/);
  });
});
