import type { Locator, Page } from 'playwright-core';
import type { PageProblems } from './browser';

// Page-side code goes in as strings or loosely typed functions: the suite is type-checked
// without the DOM's types. Strings only through evaluate (the page's CSP allows no eval).

/** The depth the overview shows for one set of one queue. */
export function depth(page: Page, queue: string, set: string): Locator {
  return page.locator(`tr[data-queue="${queue}"] a[data-count="${set}"]`);
}

/** Marks the document, so a later sameDocument() proves the page never reloaded. */
export async function markDocument(page: Page): Promise<void> {
  await page.evaluate('window.__sameDocument = true');
}

export function sameDocument(page: Page): Promise<boolean> {
  return page.evaluate<boolean>('window.__sameDocument === true');
}

const JOB_ROWS = 'table.jobs tbody tr[data-job]';

/** The ids of the job rows the list shows, once it shows exactly `count` of them. */
export async function listedIds(page: Page, count: number): Promise<string[]> {
  await page.waitForFunction(
    ({ selector, n }) => (globalThis as any).document.querySelectorAll(selector).length === n,
    { selector: JOB_ROWS, n: count },
  );
  return page
    .locator(JOB_ROWS)
    .evaluateAll((rows) => rows.map((row) => String(row.getAttribute('data-job'))));
}

/** Fails the test when the page threw or broke its Content-Security-Policy. */
export async function expectClean(problems: PageProblems): Promise<void> {
  expect(problems.errors).toEqual([]);
  expect(await problems.csp()).toEqual([]);
}
