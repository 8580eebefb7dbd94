/**
 * The timing suite (`npm run test:timing`): specs whose bounds are run times read from Redis
 * (SLOWLOG). They run one at a time, after `npm test`, on the same throwaway redis-server setup,
 * so the parallel suites do not blur the figures; .ci/run runs it in full.
 */
const base = require('./jest.config');

module.exports = { ...base, testRegex: '\\.timing\\.ts$', maxWorkers: 1 };
