/**
 * SMB Direct (MS-SMBD) with SMB2 (MS-SMB2) as an upper layer of RDMAP: the registration the
 * DDP/RDMAP analyzer picks upper layers from (ulp-contract.ts).
 */
import { PORT_SMB_DIRECT } from '../ddp-rdmap/upper-layer.js';
import { initiatorOf, type UpperLayerSpec } from '../ddp-rdmap/ulp-contract.js';
import { looksLikeNegotiateRequest } from './decode.js';
import { SmbDirectDissector } from './dissector.js';
import { SMB_DIRECT_ALL_FIELDS } from './fields.js';
import { hasSmbdPrivateData } from './private-data.js';
import { SMB_DIRECT_RULES } from './rules.js';

export const SMB_DIRECT: UpperLayerSpec = {
  id: 'smb-direct',
  name: 'SMB Direct',
  ports: [PORT_SMB_DIRECT],
  privateData: hasSmbdPrivateData,
  // As Wireshark's heuristic (a Negotiate Request first), but by the receiver's checks of MS-SMBD
  // 3.1.5.6 and MinVersion 0x0100 rather than Wireshark's exact 20 octets with MaxVersion 0x0100 too.
  firstMessage: (m, c) => m.dir === initiatorOf(c) && looksLikeNegotiateRequest(m.payload, m.length),
  fields: SMB_DIRECT_ALL_FIELDS,
  rules: SMB_DIRECT_RULES,
  create: (env) => new SmbDirectDissector(env),
};

export { SMB_DIRECT_ALL_FIELDS, SMB_DIRECT_FIELDS, SMB2_FIELDS } from './fields.js';
export { SMB_DIRECT_RULES } from './rules.js';
export { SmbDirectDissector } from './dissector.js';
