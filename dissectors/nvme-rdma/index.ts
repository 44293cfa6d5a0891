/**
 * NVMe over Fabrics on the RDMA transport as an upper layer of RDMAP (ulp-contract.ts). Wireshark
 * registers its NVMe/RDMA dissector on InfiniBand only (ULP-NOTES 1.4); here the same decode runs
 * on iWARP, where the RDMA CM private data travels in the MPA Request and Reply.
 */
import { initiatorOf, type UlpConnection, type UpperLayerSpec } from '../ddp-rdmap/ulp-contract.js';
import { PORT_NVME } from '../ddp-rdmap/upper-layer.js';
import { CM_PD_LEN, decodeCmReply, decodeCmRequest, isConnectCommand } from './decode.js';
import { NvmeRdmaDissector } from './dissector.js';
import { NVME_RDMA_ALL_FIELDS } from './fields.js';
import { NVME_RDMA_RULES } from './rules.js';

/**
 * The MPA Request carries a 32-octet RDMA_CM_REQUEST with RECFMT 0 and a plausible queue (HSQSIZE
 * and HRQSIZE non-zero, HRQSIZE = HSQSIZE + 1 as hosts send, or the admin queue), and the Reply
 * (when seen) a 32-octet RDMA_CM_ACCEPT or REJECT with RECFMT 0. Thirty-two octets of small
 * numbers prove little alone, so the structure must hold in full.
 */
export function hasNvmeRdmaPrivateData(c: UlpConnection): boolean {
  const pd = c.requestPrivateData;
  const req = decodeCmRequest(pd);
  if (!pd || !req || pd.length !== CM_PD_LEN || req.recfmt !== 0 || req.hsqsize === 0 || req.hrqsize === 0)
    return false;
  for (let i = 10; i < CM_PD_LEN; i++) if (pd[i] !== 0) return false;
  const rep = c.replyPrivateData;
  // RDMA_CM_ACCEPT is 32 octets; a rejected Reply carries the 4-octet RDMA_CM_REJECT (RECFMT, STS).
  if (rep && ((c.rejected ? rep.length < 4 : rep.length !== CM_PD_LEN) || decodeCmReply(rep)?.recfmt !== 0))
    return false;
  return true;
}

export const NVME_RDMA: UpperLayerSpec = {
  id: 'nvme',
  name: 'NVMe/RDMA',
  ports: [PORT_NVME],
  privateData: hasNvmeRdmaPrivateData,
  // As Wireshark's gate needs a CM request; without one, a valid Connect command capsule from the Initiator.
  firstMessage: (m, c) => m.dir === initiatorOf(c) && isConnectCommand(m.payload, m.length),
  fields: NVME_RDMA_ALL_FIELDS,
  rules: NVME_RDMA_RULES,
  create: (env) => new NvmeRdmaDissector(env),
};

export { NvmeRdmaDissector } from './dissector.js';
export { NVME_RDMA_ALL_FIELDS, NVME_FIELDS, NVME_RDMA_FIELDS } from './fields.js';
export { NVME_RULE, NVME_RDMA_RULES } from './rules.js';
