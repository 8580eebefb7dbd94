import Table from 'cli-table3';
import pc from 'picocolors';

export type Colors = ReturnType<typeof pc.createColors>;

/** Where the command line writes and what it reads of its environment (process's, or a test's). */
export interface CliIo {
  readonly stdout: { write(text: string): unknown; readonly isTTY?: boolean };
  readonly stderr: { write(text: string): unknown; readonly isTTY?: boolean };
  readonly env: Readonly<Record<string, string | undefined>>;
}

/**
 * How one command's result is shown: JSON on stdout with --json (one document, machine
 * readable); else text, with colours only on a terminal and not under NO_COLOR or --no-color.
 */
export class Output {
  readonly colors: Colors;

  constructor(
    private readonly io: CliIo,
    readonly json: boolean,
    color: boolean,
  ) {
    const noColor = (io.env.NO_COLOR ?? '') !== '';
    this.colors = pc.createColors(!json && color && !noColor && io.stdout.isTTY === true);
  }

  /** Writes the result: `value` as JSON, or the text `render` makes of it. */
  result(value: unknown, render: () => string): void {
    const text = this.json ? JSON.stringify(value, null, 2) : render();
    this.io.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  /** A table with a bold header row; numbers right-aligned where `right` says. */
  table(head: readonly string[], rows: readonly (readonly string[])[], options: TableShape = {}): string {
    const table = new Table({
      head: head.map((title) => this.colors.bold(title)),
      style: { head: [], border: [], compact: false },
      ...(options.right
        ? { colAligns: head.map((_, i) => (options.right?.includes(i) ? 'right' : 'left')) }
        : {}),
      ...(options.widths ? { colWidths: [...options.widths], wordWrap: true } : {}),
    });
    for (const row of rows) table.push([...row]);
    return table.toString();
  }
}

export interface TableShape {
  /** Column indexes aligned right (counts). */
  readonly right?: readonly number[];
  /** Fixed column widths; cells wrap within them. */
  readonly widths?: readonly (number | null)[];
}
