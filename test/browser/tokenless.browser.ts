import type { Browser, BrowserContext } from 'playwright-core';
import { watchedPage } from './support/browser';
import { depth, expectClean, listedIds, markDocument, sameDocument } from './support/page-state';
import { startApps, type RunningApps } from './support/running-apps';
import { startBoth } from './support/start-both';

/**
 * The dashboard of an api without EMQ_API_TOKEN, in headless Chromium: no token form, the
 * page's own writes accepted while another site's form is refused, a queue outside the
 * overview's first 100, and job names and data holding markup shown as text. No worker runs, so
 * every job stays where it was put.
 */
const LAST = 'zz-last';
const MARKUP_NAME = '<img src=x onerror="window.__xss=1">';
const MARKUP_DATA = { x: '</pre><script>window.__xss=2</script>', y: '<b id="bold">bold</b>' };

describe('the dashboard of an api without a token', () => {
  let apps: RunningApps;
  let browser: Browser;
  let context: BrowserContext;

  beforeAll(async () => {
    [apps, browser] = await startBoth(startApps({ token: false, worker: false }));
    context = await browser.newContext({ baseURL: apps.url, viewport: { width: 1200, height: 760 } });
    // 100 queues that sort before LAST: the overview holds them and leaves LAST out.
    await Promise.all(
      Array.from({ length: 100 }, (_, n) => apps.enqueue(`q${String(n).padStart(3, '0')}`, { data: n })),
    );
  });

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await apps?.stop();
  });

  it('opens without a token form or Log out, and its pages read', async () => {
    const { page, problems } = await watchedPage(context);
    await page.goto('/dashboard');
    await page.getByRole('heading', { name: 'Queues' }).waitFor();
    await page.locator('#live[data-state="live"]').waitFor();
    expect(await page.locator('#logout').isHidden()).toBe(true);
    expect(await page.getByLabel('API token').count()).toBe(0);
    await depth(page, 'q000', 'pending').filter({ hasText: /^1$/ }).waitFor();
    await depth(page, 'q000', 'pending').click();
    expect((await listedIds(page, 1)).length).toBe(1);
    expect(await context.cookies()).toEqual([]);
    await expectClean(problems);
    await page.close();
  });

  it('shows a queue past the overview’s first 100: its state, its list live, and Pause from the page', async () => {
    const { page, problems } = await watchedPage(context);
    const first = await apps.enqueue(LAST, { data: 1 });
    await page.goto(`/dashboard/#/q/${LAST}/pending`);
    await markDocument(page);
    await page.locator('.queue-charts .outside').filter({ hasText: 'first 100' }).waitFor();
    await page.locator('.tab-count[data-count="pending"]').filter({ hasText: /^1$/ }).waitFor();
    expect(await listedIds(page, 1)).toEqual([first]);
    // Its job events reach the page (the stream follows the queue on screen), without a reload.
    const second = await apps.enqueue(LAST, { data: 2 });
    expect(await listedIds(page, 2)).toEqual([second, first]);

    const pause = page.getByRole('button', { name: 'Pause', exact: true });
    expect(await pause.isEnabled()).toBe(true);
    await pause.click();
    await page.locator('.queue-head .badge.paused').waitFor();
    expect((await apps.call('GET', `/queues/${LAST}`)).body.paused).toBe(true);
    await page.getByRole('button', { name: 'Resume', exact: true }).click();
    await page.getByRole('button', { name: 'Pause', exact: true }).waitFor();
    expect((await apps.call('GET', `/queues/${LAST}`)).body.paused).toBe(false);
    expect(await sameDocument(page)).toBe(true);
    await expectClean(problems);
    await page.close();
  });

  it('refuses a form another site’s page posts to the api (403), and writes nothing', async () => {
    const page = await context.newPage();
    // A page of another site, as a drive-by link would open: a plain form, no script.
    await page.route('http://evil.test/**', (route) =>
      route.fulfill({
        contentType: 'text/html',
        body: `<form method="post" action="${apps.url}/queues/${LAST}/pause"><button>Win</button></form>`,
      }),
    );
    await page.goto('http://evil.test/');
    const [answer] = await Promise.all([
      page.waitForResponse((response) => response.url().endsWith(`/queues/${LAST}/pause`)),
      page.getByRole('button', { name: 'Win' }).click(),
    ]);
    expect(answer.status()).toBe(403);
    expect(await answer.json()).toMatchObject({ statusCode: 403, error: 'Forbidden' });
    expect((await apps.call('GET', `/queues/${LAST}`)).body.paused).toBe(false);
    await page.close();
  });

  it('shows a job name and data holding markup as text: no element made, no script run', async () => {
    const { page, problems } = await watchedPage(context);
    const id = await apps.enqueue('markup', { name: MARKUP_NAME, data: MARKUP_DATA });
    await page.goto('/dashboard/#/q/markup/pending');
    const row = page.locator(`table.jobs tr[data-job="${id}"]`);
    await row.waitFor();
    expect(await row.locator('td.name').textContent()).toBe(MARKUP_NAME);
    expect(await row.locator('td.gist').textContent()).toContain('</pre><script>');

    await row.getByRole('link', { name: id }).click();
    await page.locator('dd[data-fact="name"]').filter({ hasText: MARKUP_NAME }).waitFor();
    const data = page.locator('.block pre').filter({ hasText: 'window.__xss=2' });
    expect(JSON.parse((await data.textContent()) ?? '')).toEqual(MARKUP_DATA);
    // Nothing the markup names exists in the page, and neither payload ran.
    const made = await page.evaluate<number>(
      "document.querySelectorAll('#view img, #view script, #view b, #bold').length",
    );
    expect(made).toBe(0);
    expect(await page.evaluate<string>('typeof window.__xss')).toBe('undefined');
    await expectClean(problems);
    await page.close();
  });
});
