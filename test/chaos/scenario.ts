/** One scenario of the fault battery (docs/reliability.md, "The fault battery"). */
export interface Scenario {
  /** Its name on the command line and in its line of figures, e.g. 'worker-crashes'. */
  readonly name: string;
  /** One sentence: the fault and what is checked. */
  readonly summary: string;
  /**
   * Its sizes: each is a flag `--<scenario>-<param> <n>`, with a full default and a quick one
   * (`--quick`, what CI runs).
   */
  readonly params: Readonly<Record<string, ScenarioParam>>;
  run(context: ScenarioContext): Promise<ScenarioOutcome>;
}

export interface ScenarioParam {
  readonly full: number;
  readonly quick: number;
  readonly doc: string;
}

export interface ScenarioContext {
  /** Each param's value for this run: a flag's, else the quick or full default. */
  readonly params: Readonly<Record<string, number>>;
  readonly quick: boolean;
  /** A fresh folder of this scenario's own (ledgers, child logs, Redis data). */
  readonly workDir: string;
  /** A progress line on stderr (the figures line goes to stdout). */
  log(message: string): void;
}

export interface ScenarioOutcome {
  /** What the line of figures reports, in order. */
  readonly figures: Readonly<Record<string, number | string>>;
  /** Each promise the run broke, in a sentence; empty when it passed. */
  readonly broken: readonly string[];
}

/** Defines a scenario with its params typed by name. */
export function scenario<P extends string>(definition: {
  readonly name: string;
  readonly summary: string;
  readonly params: Readonly<Record<P, ScenarioParam>>;
  run(context: ScenarioContext & { readonly params: Readonly<Record<P, number>> }): Promise<ScenarioOutcome>;
}): Scenario {
  return definition;
}
