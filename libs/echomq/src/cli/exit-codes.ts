/** The command line's exit codes (docs/cli.md, "Output and exit codes"). */

/** The command did what it was asked (doctor: nothing found, or everything found repaired). */
export const EXIT_OK = 0;
/** The command failed, or doctor found a problem it did not repair. */
export const EXIT_FAILED = 1;
/** Bad usage: commander's refusals, and input the library refuses before sending anything. */
export const EXIT_USAGE = 2;
/** Doctor left nothing unrepaired in what it checked, but could not check a queue as a whole. */
export const EXIT_INCOMPLETE = 3;
