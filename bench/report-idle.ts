import type { IdleBreakdown } from './figures/idle-cost';

/** Commands listed by name per system; the rest are summed in one row. */
const TOP_COMMANDS = 8;

function perMinute(count: number, windowMs: number): number {
  return (count * 60_000) / windowMs;
}

function rate(value: number): string {
  return value.toLocaleString('en-US', { maximumFractionDigits: value >= 100 ? 0 : 1 });
}

/**
 * The idle figure's make-up: per system, the commands its idle worker process sent, by
 * command (an EVALSHA named by its script), per minute over all the rounds' windows.
 */
export function idleTables(breakdown: readonly IdleBreakdown[]): string[] {
  if (breakdown.length === 0) return [];
  const lines = [
    '',
    '## What an idle worker process sends',
    '',
    "The idle row's commands by kind, per system: per minute over all rounds' windows, as MONITOR saw them from the worker's connections (EVALSHA named by its script's name in the library).",
  ];
  for (const system of breakdown) {
    lines.push(
      '',
      `**${system.label}**: ${rate(perMinute(system.total, system.windowMs))} commands/min`,
      '',
      '| command | per minute | share |',
      '|---|---:|---:|',
    );
    const shown = system.commands.slice(0, TOP_COMMANDS);
    const rest = system.commands.slice(TOP_COMMANDS);
    const row = (name: string, count: number): string =>
      `| ${name} | ${rate(perMinute(count, system.windowMs))} | ${((count / system.total) * 100).toFixed(1)}% |`;
    for (const { command, count } of shown) lines.push(row(`\`${command}\``, count));
    if (rest.length > 0) {
      lines.push(
        row(
          `${rest.length} other commands`,
          rest.reduce((sum, command) => sum + command.count, 0),
        ),
      );
    }
    if (system.total === 0) lines.push('| (none) | 0 | |');
  }
  return lines;
}

/** The same, every command, for latest.json. */
export function idleJson(breakdown: readonly IdleBreakdown[]): unknown {
  return breakdown.map((system) => ({
    system: system.label,
    windowMs: Math.round(system.windowMs),
    commands: system.total,
    perMinute: perMinute(system.total, system.windowMs),
    byCommand: system.commands.map(({ command, count }) => ({
      command,
      count,
      perMinute: perMinute(count, system.windowMs),
    })),
  }));
}
