/**
 * The names `--capture-backend` takes, apart from the code that opens them: the command line's
 * parsers (cli/argv.ts, cli/fast-argv.ts) check a value without loading live capture.
 */
export const BACKENDS = ['auto', 'cap', 'tcpdump', 'dumpcap'] as const;
export type BackendChoice = (typeof BACKENDS)[number];
