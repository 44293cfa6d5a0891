/**
 * What the two parsers of the command line, yargs (cli/argv.ts) and the fast path
 * (cli/fast-argv.ts), agree on so that both give the same object: the defaults of the options that
 * have one, and how a lone "-" travels through them.
 */

/** yargs turns a lone "-" into "", so it travels as this placeholder and is turned back after parsing. */
export const DASH = '\u0000-';

/** Defaults of the options that have one: declared once, for yargs (cli/argv.ts) and for the fast path. */
export const OPTION_DEFAULTS = {
  'fail-on': 'error' as 'error' | 'warning' | 'never',
  checksums: false,
  'tcp-buffer-flow': 16,
  'tcp-buffer-total': 64,
  'tcp-reorder-window': 4,
  'capture-backend': 'auto' as 'auto' | 'cap' | 'tcpdump' | 'dumpcap',
  'flow-timeout': 300,
};
