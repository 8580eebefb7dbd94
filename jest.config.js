/** Every suite runs against a real redis-server started by test/support/global-setup.ts. */
module.exports = {
  testEnvironment: 'node',
  rootDir: '.',
  roots: ['<rootDir>/test'],
  testRegex: '\\.spec\\.ts$',
  transform: {
    // Type checking is `npm run typecheck`; here ts-jest only transpiles, which keeps the run fast.
    '^.+\\.ts$': ['ts-jest', { tsconfig: { isolatedModules: true } }],
  },
  moduleNameMapper: {
    '^@app/echomq$': '<rootDir>/libs/echomq/src',
    '^@app/echomq/(.*)$': '<rootDir>/libs/echomq/src/$1',
  },
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  maxWorkers: 2,
  testTimeout: 30_000,
};
