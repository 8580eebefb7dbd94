import type { Browser, BrowserContext } from 'playwright-core';
import { signedInContext, watchedPage } from './support/browser';
import { depth, expectClean, listedIds, markDocument, sameDocument } from './support/page-state';
import { startApps, type RunningApps } from './support/running-apps';
import { startBoth } from './support/start-both';
import { takeScreenshot } from './support/screenshot';

/**
 * The dashboard in headless Chromium against the built api and worker running as processes on a
 * Redis of this suite's own. Every wait is on what the page shows (playwright locators), bounded.
 * The worker serves the `demo` queue: `echo` completes, `poison` goes straight to dead, `fail`
 * with failTimes 1 and maxAttempts 1 dies on its first attempt and completes on the attempt after
 * a retry (attempts never go down). The tests share the queue and run in order; each leaves it
 * resumed and without pending jobs.
 */
const DEMO = 'demo';

describe('the dashboard in a real browser', () => {
  let apps: RunningApps;
  let browser: Browser;
  let context: BrowserContext;

  beforeAll(async () => {
    [apps, browser] = await startBoth(startApps());
    context = await signedInContext(browser, apps.url, apps.token);
  });

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await apps?.stop();
  });

  it('asks for the token, refuses a wrong one, and signs in with the right one into an HttpOnly session', async () => {
    const fresh = await browser.newContext({ baseURL: apps.url });
    try {
      const { page, problems } = await watchedPage(fresh);
      await page.goto('/dashboard');
      await page.getByLabel('API token').fill('not-the-token');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').filter({ hasText: 'not the api token' }).waitFor();
      expect(await fresh.cookies()).toEqual([]);

      await page.getByLabel('API token').fill(apps.token);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Queues' }).waitFor();
      await page.locator('#live[data-state="live"]').waitFor();
      const [cookie] = await fresh.cookies();
      expect(cookie).toMatchObject({ name: 'emq_session', httpOnly: true, sameSite: 'Strict' });
      expect(cookie?.value).not.toContain(apps.token);
      // The page's script cannot read it.
      expect(await page.evaluate('document.cookie')).toBe('');

      await page.getByRole('button', { name: 'Log out' }).click();
      await page.getByLabel('API token').waitFor();
      expect(await fresh.cookies()).toEqual([]);
      await expectClean(problems);
    } finally {
      await fresh.close();
    }
  });

  it('charts the work done, pauses a queue from the page, shows jobs piling up live without a reload, and resumes it', async () => {
    const { page, problems } = await watchedPage(context);
    await page.goto('/dashboard');
    await markDocument(page);
    // Work done while the page watches shows in its charts: completions and failures.
    await Promise.all([
      ...Array.from({ length: 12 }, (_, n) => apps.enqueue(DEMO, { name: 'echo', data: { n } })),
      ...[1, 2].map(() => apps.enqueue(DEMO, { name: 'poison', data: null })),
    ]);
    const row = page.locator(`tr[data-queue="${DEMO}"]`);
    await row.locator('.spark.throughput rect.bar').first().waitFor();
    await row.locator('.spark.failures rect.bar').first().waitFor();
    await depth(page, DEMO, 'dead').filter({ hasText: /^2$/ }).waitFor();
    await depth(page, DEMO, 'pending').filter({ hasText: /^0$/ }).waitFor();

    await page.getByRole('link', { name: DEMO, exact: true }).click();
    await page.getByRole('button', { name: 'Pause', exact: true }).click();
    await page.locator('.queue-head .badge.paused').waitFor();
    await page.getByRole('button', { name: 'Resume', exact: true }).waitFor();
    expect((await apps.call('GET', `/queues/${DEMO}`)).body.paused).toBe(true);

    await page.getByRole('link', { name: 'Queues' }).click();
    await Promise.all([1, 2, 3].map((n) => apps.enqueue(DEMO, { name: 'echo', data: { n } })));
    await depth(page, DEMO, 'pending').filter({ hasText: /^3$/ }).waitFor();
    await page.locator(`tr[data-queue="${DEMO}"] .badge.paused`).waitFor();
    expect(await sameDocument(page)).toBe(true);

    // EMQ_SCREENSHOT=1 writes docs/images/dashboard.png from here: the README's picture.
    if (process.env.EMQ_SCREENSHOT === '1') await takeScreenshot(page, apps);

    await page.getByRole('link', { name: DEMO, exact: true }).click();
    await page.getByRole('button', { name: 'Resume', exact: true }).click();
    await page.getByRole('button', { name: 'Pause', exact: true }).waitFor();
    await page.locator('.tab-count[data-count="pending"]').filter({ hasText: /^0$/ }).waitFor();
    expect((await apps.call('GET', `/queues/${DEMO}`)).body).toMatchObject({
      paused: false,
      counts: { pending: 0 },
    });
    expect(await sameDocument(page)).toBe(true);
    await expectClean(problems);
    await page.close();
  });

  it('opens a dead job with its error, retries it, and sees it complete', async () => {
    const { page, problems } = await watchedPage(context);
    await page.goto('/dashboard');
    await markDocument(page);
    const id = await apps.enqueue(DEMO, { name: 'fail', data: { failTimes: 1 }, maxAttempts: 1 });

    await depth(page, DEMO, 'dead')
      .filter({ hasText: /^[1-9]/ })
      .click();
    const row = page.locator(`table.jobs[data-set="dead"] tr[data-job="${id}"]`);
    await row.filter({ hasText: 'demo failure 1 of 1' }).waitFor();
    await row.getByRole('link', { name: id }).click();

    await page.locator('.job-page .badge[data-state="dead"]').waitFor();
    await page.locator('pre.error').filter({ hasText: 'Error: demo failure 1 of 1' }).waitFor();
    // The stack the worker kept: the error's first line, then its frames.
    await page
      .locator('pre.stack')
      .filter({ hasText: /demo failure 1 of 1[\s\S]*\sat\s/ })
      .waitFor();
    await page
      .locator('dd[data-fact="attempts"]')
      .filter({ hasText: /^1 \(0 of 1 left/ })
      .waitFor();

    await page.getByRole('button', { name: 'Retry', exact: true }).click();
    await page.locator('.job-page .badge[data-state="completed"]').waitFor();
    await page.locator('.block pre').filter({ hasText: '"attempt": 2' }).waitFor();
    expect((await apps.call('GET', `/queues/${DEMO}/jobs/${id}`)).body).toMatchObject({
      state: 'completed',
      result: { attempt: 2 },
    });

    await page.locator('.crumbs').getByRole('link', { name: DEMO }).click();
    await page.locator(`table.jobs[data-set="completed"] tr[data-job="${id}"]`).waitFor();
    expect(await sameDocument(page)).toBe(true);
    await expectClean(problems);
    await page.close();
  });

  it('filters a set by name and by lane, pauses a lane, and drains the queue', async () => {
    const { page, problems } = await watchedPage(context);
    await apps.call('POST', `/queues/${DEMO}/pause`);
    try {
      const alpha = await Promise.all([1, 2].map((n) => apps.enqueue(DEMO, { name: 'alpha', data: { n } })));
      const beta = await apps.enqueue(DEMO, { name: 'beta', data: {}, lane: 'tenant-b' });
      await page.goto(`/dashboard#/q/${DEMO}/pending`);
      await listedIds(page, 3);

      await page.getByLabel('Name').fill('alpha');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/name=alpha/);
      expect((await listedIds(page, 2)).sort()).toEqual([...alpha].sort());
      expect(page.url()).toContain('name=alpha');

      await page.getByRole('link', { name: 'Clear' }).click();
      await page.getByLabel('Lane').fill('tenant-b');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/lane=tenant-b/);
      expect(await listedIds(page, 1)).toEqual([beta]);

      const lane = page.locator('.lanes tr[data-lane="tenant-b"]');
      await lane.getByRole('button', { name: 'Pause lane' }).click();
      await lane.getByRole('button', { name: 'Resume lane' }).waitFor();
      const lanes = (await apps.call('GET', `/queues/${DEMO}/lanes`)).body.lanes as {
        lane: string;
        paused: boolean;
      }[];
      expect(lanes.find((l) => l.lane === 'tenant-b')?.paused).toBe(true);
      await lane.getByRole('button', { name: 'Resume lane' }).click();
      await lane.getByRole('button', { name: 'Pause lane' }).waitFor();

      await page.getByRole('button', { name: 'Drain' }).click();
      await page.getByRole('button', { name: /Click again to remove/ }).click();
      await page.locator('.notice').filter({ hasText: 'removed 3 jobs' }).waitFor();
      await page.locator('.tab-count[data-count="pending"]').filter({ hasText: /^0$/ }).waitFor();
      expect((await apps.call('GET', `/queues/${DEMO}`)).body.counts.pending).toBe(0);
      await expectClean(problems);
    } finally {
      await apps.call('POST', `/queues/${DEMO}/resume`);
      await apps.call('POST', `/queues/${DEMO}/lanes/tenant-b/resume`);
      await page.close();
    }
  });

  it('removes one job and retries every dead job from the page', async () => {
    const { page, problems } = await watchedPage(context);
    const dead = await Promise.all([1, 2].map(() => apps.enqueue(DEMO, { name: 'poison', data: null })));
    await page.goto(`/dashboard#/q/${DEMO}/dead`);
    for (const id of dead) await page.locator(`table.jobs tr[data-job="${id}"]`).waitFor();
    await apps.call('POST', `/queues/${DEMO}/pause`);
    try {
      const id = await apps.enqueue(DEMO, { name: 'echo', data: { keep: false } });
      await page.goto(`/dashboard#/q/${DEMO}/job/${id}`);
      await page.locator('.job-page .badge[data-state="pending"]').waitFor();
      await page.getByRole('button', { name: 'Remove' }).click();
      await page.getByRole('button', { name: 'Click again to remove this job' }).click();
      await page.locator('.job-page .badge[data-state="gone"]').waitFor();
      expect((await apps.call('GET', `/queues/${DEMO}/jobs/${id}`)).status).toBe(404);

      const deadBefore = (await apps.call('GET', `/queues/${DEMO}`)).body.counts.dead as number;
      expect(deadBefore).toBeGreaterThanOrEqual(2);
      await page.locator('.crumbs').getByRole('link', { name: DEMO }).click();
      await page.getByRole('button', { name: 'Retry all dead' }).click();
      await page.getByRole('button', { name: 'Click again to retry every dead job' }).click();
      await page
        .locator('.notice')
        .filter({ hasText: `Retried ${deadBefore} dead jobs.` })
        .waitFor();
      await page.locator('.tab-count[data-count="dead"]').filter({ hasText: /^0$/ }).waitFor();
      const counts = (await apps.call('GET', `/queues/${DEMO}`)).body.counts;
      expect(counts).toMatchObject({ dead: 0, pending: deadBefore });
      await expectClean(problems);
    } finally {
      await apps.call('POST', `/queues/${DEMO}/drain`, {});
      await apps.call('POST', `/queues/${DEMO}/resume`);
      await page.close();
    }
  });
});
