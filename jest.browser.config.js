/**
 * The browser suite (`npm run test:browser`): the dashboard in headless Chromium against the
 * built apps running as processes. Its global setup finds Chromium (none fails the run) and
 * builds the apps; each spec starts its own redis-server, api and worker. One spec at a time:
 * each runs two Node processes and a browser.
 */
const base = require('./jest.config');

module.exports = {
  ...base,
  roots: ['<rootDir>/test/browser'],
  testRegex: '\\.browser\\.ts$',
  globalSetup: '<rootDir>/test/browser/support/global-setup.ts',
  globalTeardown: undefined,
  maxWorkers: 1,
  testTimeout: 60_000,
};
