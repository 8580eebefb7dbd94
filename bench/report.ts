import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchConfig } from './config';
import { formatDuration } from './support/clock';
import type { Machine, Versions } from './support/environment';
import { REPO_ROOT } from './support/paths';
import { formatNumber, type Measurement, type SoloMeasurement } from './support/measurement';
import { summarize, type Summary } from './support/stats';
import type { IdleBreakdown } from './figures/idle-cost';
import { idleJson, idleTables } from './report-idle';
import { PEER_IDS, SYSTEM_IDS } from './systems';
import type { QueueSystem, SystemId } from './systems/types';

export const RESULTS_DIR = join(REPO_ROOT, 'bench', 'results');

export interface RunInfo {
  readonly config: BenchConfig;
  readonly startedAt: Date;
  readonly durationMs: number;
  readonly versions: Versions;
  readonly machine: Machine;
  readonly loadAverageAtEnd: readonly number[];
  readonly systems: readonly QueueSystem[];
  readonly method: readonly string[];
}

/** One record of latest.json: a system's (or a ratio's) figure over the rounds. */
export interface ResultRecord extends Summary {
  readonly system: string;
  readonly figure: string;
  readonly key: string;
  readonly unit: string;
  /** 'none' for an EchoMQ-only row where neither direction is better. */
  readonly better: 'higher' | 'lower' | 'none';
  readonly rounds: number;
  /** The per-round values, in round order. */
  readonly values: readonly number[];
}

/** What a run adds besides the side-by-side rows: the EchoMQ-only rows and the idle breakdown. */
export interface Extras {
  readonly solo: readonly SoloMeasurement[];
  readonly idle: readonly IdleBreakdown[];
}

interface RatioColumn {
  readonly over: SystemId;
  readonly label: string;
}

/** EchoMQ over each other system, in the systems' order. */
function ratioColumns(systems: readonly QueueSystem[]): RatioColumn[] {
  return PEER_IDS.map((over) => ({ over, label: `EchoMQ / ${labelOf(systems, over)}` }));
}

function labelOf(systems: readonly QueueSystem[], id: SystemId): string {
  return systems.find((system) => system.id === id)?.label ?? id;
}

/** EchoMQ's value over another system's, round by round (same round = same machine state). */
function ratios(m: Measurement, over: SystemId): number[] {
  return m.values.echomq.map((value, round) => value / m.values[over][round]);
}

export function records(
  measurements: readonly Measurement[],
  systems: readonly QueueSystem[],
): ResultRecord[] {
  const out: ResultRecord[] = [];
  for (const m of measurements) {
    const base = { figure: m.figure, key: m.key, better: m.better };
    for (const system of systems) {
      const values = m.values[system.id];
      out.push({
        ...base,
        system: system.label,
        unit: m.unit,
        rounds: values.length,
        values,
        ...summarize(values),
      });
    }
    for (const ratio of ratioColumns(systems)) {
      const values = ratios(m, ratio.over);
      out.push({
        ...base,
        system: ratio.label,
        unit: 'ratio',
        rounds: values.length,
        values,
        ...summarize(values),
      });
    }
  }
  return out;
}

function cell(summary: Summary, unit: string): string {
  return `${formatNumber(summary.median, unit)} (${formatNumber(summary.min, unit)}–${formatNumber(summary.max, unit)})`;
}

function ratioCell(values: readonly number[]): string {
  const s = summarize(values);
  const fixed = (value: number): string => (Number.isFinite(value) ? value.toFixed(2) : 'n/a');
  // A peer at 0 (an idle worker that sends nothing) leaves no ratio to show.
  return Number.isFinite(s.median) ? `${fixed(s.median)}× (${fixed(s.min)}–${fixed(s.max)})` : 'n/a';
}

const ARROWS = { higher: ' ↑', lower: ' ↓' } as const;

/** The EchoMQ-only rows (flow control): one column, no ratios against the other systems. */
function soloTable(solo: readonly SoloMeasurement[]): string[] {
  if (solo.length === 0) return [];
  const lines = [
    '',
    '## EchoMQ only: flow control',
    '',
    'Lanes, priorities and shared limits have no counterpart in the other systems; ratios here are EchoMQ over EchoMQ, per round (see Method).',
    '',
    '| figure | unit | EchoMQ |',
    '|---|---|---:|',
  ];
  for (const m of solo) {
    const value = m.unit === 'ratio' ? ratioCell(m.values) : cell(summarize(m.values), m.unit);
    lines.push(`| ${m.figure}${m.better ? ARROWS[m.better] : ''} | ${m.unit} | ${value} |`);
  }
  return lines;
}

function soloRecords(solo: readonly SoloMeasurement[]): ResultRecord[] {
  return solo.map((m) => ({
    figure: m.figure,
    key: m.key,
    better: m.better ?? 'none',
    system: 'EchoMQ',
    unit: m.unit,
    rounds: m.values.length,
    values: m.values,
    ...summarize(m.values),
  }));
}

export function markdown(measurements: readonly Measurement[], info: RunInfo, extras: Extras): string {
  const { config, versions, machine } = info;
  const labels = SYSTEM_IDS.map((id) => labelOf(info.systems, id));
  const columns = ratioColumns(info.systems);
  const lines: string[] = [
    `# EchoMQ vs BullMQ vs Bee-Queue: one Redis, one worker process`,
    '',
    `Mode **${config.mode}**, ${config.rounds} rounds (each round runs ${labels.join(', ')} in turn on the same redis-server, FLUSHALL between runs). ` +
      `Started ${info.startedAt.toISOString()}; took **${formatDuration(info.durationMs)}** (from node start to the report, after the tsc build).`,
    '',
    `Cells: median over the rounds (min–max). Ratios: median of the per-round ratios EchoMQ / other (min–max); ` +
      `above 1 means EchoMQ is higher, which is better for ↑ rows and worse for ↓ rows.`,
    '',
    `| figure | unit | ${labels.join(' | ')} | ${columns.map((r) => r.label).join(' | ')} |`,
    `|---|---|${labels.map(() => '---:').join('|')}|${columns.map(() => '---:').join('|')}|`,
  ];
  for (const m of measurements) {
    const systems = SYSTEM_IDS.map((id) => cell(summarize(m.values[id]), m.unit));
    const ratioCells = columns.map((r) => ratioCell(ratios(m, r.over)));
    lines.push(
      `| ${m.figure} ${m.better === 'higher' ? '↑' : '↓'} | ${m.unit} | ${systems.join(' | ')} | ${ratioCells.join(' | ')} |`,
    );
  }
  lines.push(
    ...idleTables(extras.idle),
    ...soloTable(extras.solo),
    '',
    '## Versions',
    '',
    `node ${versions.node} · redis-server ${versions.redisServer} · echomq ${versions.echomq} · bullmq ${versions.bullmq} · ` +
      `bee-queue ${versions.beeQueue} · ioredis ${versions.ioredis} (EchoMQ, BullMQ) · redis ${versions.nodeRedis} (node_redis, Bee-Queue)`,
    '',
    '## Machine',
    '',
    `nproc ${machine.nproc} · ${machine.cpuModel} · ${machine.memoryGiB} GiB · ${machine.os} · ` +
      `load average (1/5/15 min) ${machine.loadAverageAtStart.join(' / ')} at start, ${info.loadAverageAtEnd.join(' / ')} at the end`,
    '',
    '## Settings',
    '',
  );
  for (const system of info.systems) {
    lines.push(`**${system.label}**`, '', ...system.settings.map((line) => `- ${line}`), '');
  }
  lines.push('## Method', '', ...info.method.map((line) => `- ${line}`), '');
  return lines.join('\n');
}

export function writeResults(
  measurements: readonly Measurement[],
  info: RunInfo,
  extras: Extras,
): { md: string; json: string } {
  mkdirSync(RESULTS_DIR, { recursive: true });
  // The full run's files are the published figures; a quick (CI) run must not overwrite them.
  const name = info.config.mode === 'quick' ? 'quick' : 'latest';
  const md = join(RESULTS_DIR, `${name}.md`);
  const json = join(RESULTS_DIR, `${name}.json`);
  writeFileSync(md, markdown(measurements, info, extras));
  const document = {
    mode: info.config.mode,
    startedAt: info.startedAt.toISOString(),
    durationMs: Math.round(info.durationMs),
    rounds: info.config.rounds,
    config: info.config,
    versions: info.versions,
    machine: { ...info.machine, loadAverageAtEnd: info.loadAverageAtEnd },
    settings: Object.fromEntries(info.systems.map((system) => [system.label, system.settings])),
    method: info.method,
    records: [...records(measurements, info.systems), ...soloRecords(extras.solo)],
    idle: idleJson(extras.idle),
  };
  writeFileSync(json, `${JSON.stringify(document, null, 2)}\n`);
  return { md, json };
}
