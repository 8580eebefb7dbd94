export * from './base62';
export * from './snowflake';
export * from './branded-id';
export * from './node-lease-lost-error';
export * from './leased-snowflakes';
