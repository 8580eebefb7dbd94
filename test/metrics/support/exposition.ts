/** One sample line of the Prometheus text format: `name{label="value",...} 12.5`. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Exposition {
  readonly samples: readonly Sample[];
  /** `# TYPE` of each metric family, e.g. counter, gauge, histogram. */
  readonly types: ReadonlyMap<string, string>;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Parses exposition text (version 0.0.4); a line that is neither a comment nor a sample throws. */
export function parseExposition(text: string): Exposition {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const type = /^# TYPE (\S+) (\S+)$/.exec(line);
      if (type) types.set(type[1], type[2]);
      continue;
    }
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`Not a sample line: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    for (const [, key, raw] of (match[2] ?? '').matchAll(LABEL)) {
      labels[key] = raw.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
    }
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return { samples, types };
}

/** The samples of `name` whose labels include all of `labels`. */
export function samplesOf(
  exposition: Exposition,
  name: string,
  labels: Readonly<Record<string, string>> = {},
): Sample[] {
  return exposition.samples.filter(
    (sample) =>
      sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
}

/** The one sample of `name` with these labels (exactly one must match), or undefined for none. */
export function valueOf(
  exposition: Exposition,
  name: string,
  labels: Readonly<Record<string, string>> = {},
): number | undefined {
  const found = samplesOf(exposition, name, labels);
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value;
}
