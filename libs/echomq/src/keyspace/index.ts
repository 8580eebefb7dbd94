export * from './key-prefix';
export * from './queue-name';
export * from './keyspace';
export * from './lane-name';
export * from './partition-name';
