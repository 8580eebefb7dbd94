/** One file of the dashboard's page, as the server sends it. */
export interface DashboardAsset {
  readonly contentType: string;
  readonly body: string | Buffer;
}

/** The page's entry: what GET /dashboard answers. */
export const DASHBOARD_INDEX = 'index.html';

/**
 * Placeholder until the page lands: the dashboard's files by name (index.html, and the script
 * and style files index.html loads from /dashboard/assets/<name>); undefined for any other name.
 */
export function dashboardAsset(name: string): DashboardAsset | undefined {
  if (name !== DASHBOARD_INDEX) return undefined;
  return {
    contentType: 'text/html; charset=utf-8',
    body: '<!doctype html><title>EchoMQ</title><p>The dashboard page is being built.</p>',
  };
}
