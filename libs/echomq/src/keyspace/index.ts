export * from './queue-name';
export * from './keyspace';
