import type { UpperFactory } from './pipeline.js';

/** The layer above MPA the CLI runs by default: none until DDP/RDMAP is wired. */
export const defaultUpper: UpperFactory | null = null;
