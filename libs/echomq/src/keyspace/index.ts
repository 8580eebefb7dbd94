export * from './key-prefix';
export * from './queue-name';
export * from './keyspace';
