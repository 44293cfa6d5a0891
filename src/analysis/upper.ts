import type { UpperFactory } from './pipeline.js';
import { ddpUpperFactory } from '../../dissectors/ddp-rdmap/upper-factory.js';

/** The layer above MPA the CLI runs by default: DDP/RDMAP (RFC 5041, 5040, 7306). */
export const defaultUpper: UpperFactory | null = ddpUpperFactory();
