import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { chromiumPath } from './chromium';

/** Long enough for a sample, an event and a redraw on a slow machine; every wait is on page state. */
export const WAIT_MS = 15_000;

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), headless: true });
}

/** What a page did that it must not: uncaught errors and Content-Security-Policy violations. */
export interface PageProblems {
  readonly errors: string[];
  csp(): Promise<string[]>;
}

/**
 * A new page that records its uncaught errors and every CSP violation (the api's policy allows
 * no inline script, style attribute or handler: a violation is a bug in the page).
 */
export async function watchedPage(context: BrowserContext): Promise<{ page: Page; problems: PageProblems }> {
  const page = await context.newPage();
  page.setDefaultTimeout(WAIT_MS);
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  // A string, not a function: the suite is type-checked without the DOM's types.
  await page.addInitScript({
    content: `window.__csp = [];
      document.addEventListener('securitypolicyviolation', (event) => {
        window.__csp.push(event.violatedDirective + ': ' + (event.blockedURI || 'inline'));
      });`,
  });
  const csp = (): Promise<string[]> => page.evaluate<string[]>('window.__csp');
  return { page, problems: { errors, csp } };
}

/** A browser context holding a dashboard session, signed in through the api's session route. */
export async function signedInContext(browser: Browser, url: string, token: string): Promise<BrowserContext> {
  const context = await browser.newContext({
    baseURL: url,
    viewport: { width: 1200, height: 760 },
    colorScheme: 'light',
  });
  const answer = await context.request.post('/dashboard/session', { data: { token } });
  if (answer.status() !== 204)
    throw new Error(`signing in answered ${answer.status()}: ${await answer.text()}`);
  return context;
}
