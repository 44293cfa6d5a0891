/**
 * The external tools some suites need, probed once per run by test/setup/global-setup.ts (not
 * once per file: `tshark -v` alone takes most of a second of CPU). Suites skip visibly, naming
 * the reason, when a tool is missing.
 */
import { inject } from 'vitest';

const tools = inject('tools');

/** True when tshark runs here. */
export const HAVE_TSHARK = tools.tshark !== null;
/** `tshark -v`'s first line, or null. */
export const TSHARK_VERSION = tools.tshark?.split('\n')[0] ?? null;
/** True when tmux runs here. */
export const HAVE_TMUX = tools.tmux;
