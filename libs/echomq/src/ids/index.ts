export * from './base62';
export * from './snowflake';
export * from './branded-id';
