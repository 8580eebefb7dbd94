import { ReaperAgenda } from '@app/echomq/worker/reaper-agenda';

describe('the reaper agenda', () => {
  it('plans each queue once, keeps the earlier of two plans with byAt, and replaces with set', () => {
    const agenda = new ReaperAgenda();
    agenda.byAt('a', 100);
    agenda.byAt('a', 50);
    agenda.byAt('a', 80);
    agenda.set('b', 200);
    expect(agenda.queues()).toEqual(['a', 'b']);
    expect(agenda.soonest()).toBe(50);
    agenda.set('a', 300);
    expect(agenda.soonest()).toBe(200);
  });

  it('lists the queues due by an instant, soonest first, and forgets dropped ones', () => {
    const agenda = new ReaperAgenda();
    agenda.set('late', 30);
    agenda.set('early', 10);
    agenda.set('future', 1_000);
    expect(agenda.dueBy(30)).toEqual(['early', 'late']);
    agenda.drop('early');
    expect(agenda.has('early')).toBe(false);
    expect(agenda.dueBy(30)).toEqual(['late']);
    agenda.drop('late');
    agenda.drop('future');
    expect(agenda.soonest()).toBeUndefined();
  });
});
