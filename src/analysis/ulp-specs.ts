/**
 * The upper layers this build decodes above RDMAP, in the order the first-Send heuristics try
 * them. The catalog, the filter fields and the registry read this one list.
 */
import type { UlpId, UpperLayerSpec } from '../../dissectors/ddp-rdmap/ulp-contract.js';
import { SMB_DIRECT } from '../../dissectors/smb-direct/index.js';
import { RPC_RDMA } from '../../dissectors/rpc-rdma/index.js';
import { NVME_RDMA } from '../../dissectors/nvme-rdma/index.js';
import { ISER } from '../../dissectors/iser/index.js';

export const ULP_SPECS: readonly UpperLayerSpec[] = [SMB_DIRECT, RPC_RDMA, NVME_RDMA, ISER];

export function ulpSpec(id: UlpId): UpperLayerSpec | undefined {
  return ULP_SPECS.find((s) => s.id === id);
}
