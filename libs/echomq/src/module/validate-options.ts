import { describeValue } from '../errors';
import { MAX_NODE } from '../ids';
import { DEFAULT_KEY_PREFIX, isValidKeyPrefix, isValidQueueName, KEY_PREFIX_RULE } from '../keyspace';
import {
  checkFields,
  checkInteger,
  checkRecord,
  optionPath,
  refuse,
  type OptionCheck,
} from '../option-checks';
import { assertQueueOptions } from '../queue/queue-options';
import { checkPartitionedLimits } from '../queue/partitions/partition-options';
import { checkDeclaredSchedules } from '../schedules/schedule-checks';
import { PAYLOAD_MAX_BYTES, SCRIPT_BATCH_MAX } from '../scripts/limits';
import { otelApi, TRACING_NEEDS_API } from '../tracing/otel-api';
import type {
  DurableOptions,
  EchoMqModuleOptions,
  ReaperOptions,
  ResolvedModuleSettings,
} from './echomq-options';

const HOUR_MS = 3_600_000;

/** The value each setting takes when its option is not given (docs/options.md). */
export const MODULE_DEFAULTS: ResolvedModuleSettings = {
  keyPrefix: DEFAULT_KEY_PREFIX,
  eventsMaxLen: 10_000,
  maxPayloadBytes: 512 * 1024,
  idempotencyTtlMs: 24 * HOUR_MS,
  shutdownGraceMs: 10_000,
  commandTimeoutMs: 5_000,
  replayWindowMs: 60_000,
  reaperIntervalMs: 30_000,
  reaperBatch: 500,
  tracing: false,
};

/** The documented range of each numeric module option (docs/options.md). */
export const MODULE_OPTION_RANGES = {
  nodeId: { min: 0, max: MAX_NODE },
  // Below 100 the stream no longer holds a burst's events for a reader that is a moment behind.
  eventsMaxLen: { min: 100, max: 1_000_000 },
  maxPayloadBytes: { min: 1, max: PAYLOAD_MAX_BYTES },
  // Below a second a retry after a lost reply could already miss its key and enqueue twice.
  idempotencyTtlMs: { min: 1_000, max: 30 * 24 * HOUR_MS },
  shutdownGraceMs: { min: 0, max: 10 * 60_000 },
  commandTimeoutMs: { min: 100, max: 120_000 },
  replayWindowMs: { min: 5_000, max: HOUR_MS },
  reaperIntervalMs: { min: 50, max: 60_000 },
  // 0 would reap nothing; above SCRIPT_BATCH_MAX one call could block Redis too long.
  reaperBatch: { min: 1, max: SCRIPT_BATCH_MAX },
  // Redis Sentinel setups run a handful of replicas; 16 is far past any of them.
  durableReplicas: { min: 1, max: 16 },
  // Below 10 ms a WAIT can hardly see a replica's acknowledgement; above a minute, a caller waits too long.
  durableTimeoutMs: { min: 10, max: 60_000 },
} as const;

/** How long a durable write waits for its replicas when `durable.timeoutMs` is not given. */
export const DURABLE_TIMEOUT_DEFAULT_MS = 1_000;

const DURABLE_CHECKS: { readonly [K in keyof DurableOptions]-?: OptionCheck } = {
  replicas: (value, option) => checkInteger(value, option, MODULE_OPTION_RANGES.durableReplicas),
  timeoutMs: (value, option) => checkInteger(value, option, MODULE_OPTION_RANGES.durableTimeoutMs),
};

const REAPER_CHECKS: { readonly [K in keyof ReaperOptions]-?: OptionCheck } = {
  intervalMs: (value, option) => checkInteger(value, option, MODULE_OPTION_RANGES.reaperIntervalMs),
  batch: (value, option) => checkInteger(value, option, MODULE_OPTION_RANGES.reaperBatch),
};

const MODULE_CHECKS: { readonly [K in keyof EchoMqModuleOptions]-?: OptionCheck } = {
  connection: (value, option) => checkConnection(value, option),
  nodeId: (value, option) => checkInteger(value, option, MODULE_OPTION_RANGES.nodeId),
  keyPrefix: (value, option) => checkKeyPrefix(value, option),
  defaults: (value, option) => assertQueueOptions(value, option),
  queues: (value, option) => checkQueues(value, option),
  eventsMaxLen: (value, option) => checkInteger(value, option, MODULE_OPTION_RANGES.eventsMaxLen),
  maxPayloadBytes: (value, option) => checkInteger(value, option, MODULE_OPTION_RANGES.maxPayloadBytes),
  idempotencyTtlMs: (value, option) => checkInteger(value, option, MODULE_OPTION_RANGES.idempotencyTtlMs),
  shutdownGraceMs: (value, option) => checkInteger(value, option, MODULE_OPTION_RANGES.shutdownGraceMs),
  commandTimeoutMs: (value, option) => checkInteger(value, option, MODULE_OPTION_RANGES.commandTimeoutMs),
  replayWindowMs: (value, option) => checkInteger(value, option, MODULE_OPTION_RANGES.replayWindowMs),
  reaper: (value, option) => checkFields(checkRecord(value, option), REAPER_CHECKS, option),
  startProcessors: (value, option) => checkBoolean(value, option),
  schedules: (value, option) => checkDeclaredSchedules(value, option),
  requireNoEviction: (value, option) => checkBoolean(value, option),
  durable: (value, option) => checkDurable(value, option),
  tracing: (value, option) => checkTracing(value, option),
};

function checkDurable(value: unknown, option: string): void {
  const durable = checkRecord(value, option);
  if (durable.replicas === undefined)
    refuse(optionPath(option, 'replicas'), 'is required: how many replicas must acknowledge');
  checkFields(durable, DURABLE_CHECKS, option);
}

/** Tracing on needs the OpenTelemetry API, an optional peer dependency: refused at boot without it. */
function checkTracing(value: unknown, option: string): void {
  checkBoolean(value, option);
  if (value === true && !otelApi()) refuse(option, TRACING_NEEDS_API);
}

/** Refuses 'false' and 0 alike: a flag read from the environment must be parsed, not passed as text. */
function checkBoolean(value: unknown, option: string): void {
  if (typeof value !== 'boolean') refuse(option, `must be true or false, got ${describeValue(value)}`);
}

/**
 * Checks every module option against its documented range and returns the settings
 * with defaults filled in. Throws InvalidOptionError naming the first option refused.
 * Nothing here touches Redis, so it can run before any connection is made.
 */
export function validateModuleOptions(options: unknown): ResolvedModuleSettings {
  const record = checkRecord(options, 'EchoMqModule options');
  if (record.connection === undefined) {
    refuse(
      'connection',
      'is required: { url }, ioredis options (host, port, path) or { cluster: { nodes } }',
    );
  }
  checkFields(record, MODULE_CHECKS, '');
  // With a cluster connection too: each confirmation goes to the master serving its key's slot.
  const given = options as EchoMqModuleOptions;
  checkPartitionedLimits(given.defaults, given.queues);
  const settings: ResolvedModuleSettings = {
    keyPrefix: given.keyPrefix ?? MODULE_DEFAULTS.keyPrefix,
    eventsMaxLen: given.eventsMaxLen ?? MODULE_DEFAULTS.eventsMaxLen,
    maxPayloadBytes: given.maxPayloadBytes ?? MODULE_DEFAULTS.maxPayloadBytes,
    idempotencyTtlMs: given.idempotencyTtlMs ?? MODULE_DEFAULTS.idempotencyTtlMs,
    shutdownGraceMs: given.shutdownGraceMs ?? MODULE_DEFAULTS.shutdownGraceMs,
    commandTimeoutMs: given.commandTimeoutMs ?? MODULE_DEFAULTS.commandTimeoutMs,
    replayWindowMs: given.replayWindowMs ?? MODULE_DEFAULTS.replayWindowMs,
    reaperIntervalMs: given.reaper?.intervalMs ?? MODULE_DEFAULTS.reaperIntervalMs,
    reaperBatch: given.reaper?.batch ?? MODULE_DEFAULTS.reaperBatch,
    tracing: given.tracing ?? MODULE_DEFAULTS.tracing,
  };
  // A call repeated after its deadline passed must still find its first reply remembered.
  if (settings.replayWindowMs < 2 * settings.commandTimeoutMs) {
    refuse(
      'replayWindowMs',
      `must be at least 2 × commandTimeoutMs (${2 * settings.commandTimeoutMs}), got ${settings.replayWindowMs}` +
        (given.replayWindowMs === undefined ? ' (the default)' : ''),
    );
  }
  return settings;
}

/** Braces, colons and glob characters would break the hashtag, the key grammar or an ACL pattern. */
function checkKeyPrefix(value: unknown, option: string): void {
  if (!isValidKeyPrefix(value)) refuse(option, `must be ${KEY_PREFIX_RULE}, got ${describeValue(value)}`);
}

function checkQueues(value: unknown, option: string): void {
  for (const [name, queueOptions] of Object.entries(checkRecord(value, option))) {
    const at = optionPath(option, name);
    if (!isValidQueueName(name))
      refuse(at, 'is not a valid queue name: use 1-64 characters from A-Z a-z 0-9 . _ -');
    if (queueOptions !== undefined) assertQueueOptions(queueOptions, at);
  }
}

/**
 * ioredis's own keyPrefix would prefix the keys a script declares but not the row keys it
 * builds from its arguments, splitting one queue's keys across two prefixes (and, on a
 * cluster, two slots). EchoMQ's keyPrefix composes every key.
 */
function refuseClientKeyPrefix(value: unknown, option: string): void {
  if (value !== undefined) refuse(option, 'is not supported: use the module option keyPrefix');
}

/**
 * Sentinel: ioredis asks the sentinels for the master called `name` and follows it across
 * failovers. A url, host, port or path beside them would be ignored by ioredis, so it is refused.
 */
function checkSentinels(connection: Record<string, unknown>, at: (key: string) => string): void {
  const sentinels = connection.sentinels;
  if (!Array.isArray(sentinels) || sentinels.length === 0) {
    refuse(at('sentinels'), 'must list at least one sentinel ({ host, port })');
  }
  sentinels.forEach((sentinel: unknown, index) => {
    const entry = checkRecord(sentinel, at(`sentinels[${index}]`));
    if (entry.host !== undefined && (typeof entry.host !== 'string' || entry.host === '')) {
      refuse(at(`sentinels[${index}].host`), `must be a non-empty string, got ${describeValue(entry.host)}`);
    }
    if (entry.port !== undefined)
      checkInteger(entry.port, at(`sentinels[${index}].port`), { min: 1, max: 65_535 });
  });
  if (typeof connection.name !== 'string' || connection.name === '') {
    refuse(at('name'), `must name the master the sentinels watch, got ${describeValue(connection.name)}`);
  }
  for (const key of ['url', 'host', 'port', 'path']) {
    if (connection[key] !== undefined)
      refuse(at(key), 'cannot be given with sentinels: the sentinels name the master');
  }
}

/** Refuses a connection that names no server, rather than letting ioredis fall back to localhost:6379. */
function checkConnection(value: unknown, option: string): void {
  const connection = checkRecord(value, option);
  const at = (key: string): string => optionPath(option, key);
  refuseClientKeyPrefix(connection.keyPrefix, at('keyPrefix'));
  if ('cluster' in connection) {
    const cluster = checkRecord(connection.cluster, at('cluster'));
    const clusterOptions = cluster.options as Record<string, unknown> | undefined;
    refuseClientKeyPrefix(clusterOptions?.keyPrefix, at('cluster.options.keyPrefix'));
    if (!Array.isArray(cluster.nodes) || cluster.nodes.length === 0) {
      refuse(at('cluster.nodes'), 'must list at least one seed node');
    }
    for (const key of ['url', 'host', 'port', 'path', 'sentinels']) {
      if (connection[key] !== undefined)
        refuse(at(key), 'cannot be given with cluster: the cluster names its nodes');
    }
    return;
  }
  if (connection.sentinels !== undefined) {
    checkSentinels(connection, at);
    return;
  }
  if ('url' in connection && (typeof connection.url !== 'string' || connection.url.trim() === '')) {
    // Typically `{ url: process.env.REDIS_URL }` with the variable unset.
    refuse(
      at('url'),
      `must be a non-empty string, got ${describeValue(connection.url)} (is its environment variable set?)`,
    );
  }
  const { host, port, path } = connection;
  if (host !== undefined && (typeof host !== 'string' || host === '')) {
    refuse(at('host'), `must be a non-empty string, got ${describeValue(host)}`);
  }
  if (port !== undefined) checkInteger(port, at('port'), { min: 1, max: 65_535 });
  if (path !== undefined && (typeof path !== 'string' || path === '')) {
    refuse(at('path'), `must be a non-empty string, got ${describeValue(path)}`);
  }
  if (connection.url === undefined && host === undefined && port === undefined && path === undefined) {
    refuse(option, 'names no Redis server: give url, host/port, path or cluster.nodes');
  }
}
