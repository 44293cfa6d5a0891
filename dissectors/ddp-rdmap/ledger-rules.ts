import { rule, type RuleDef } from '../../src/vocabulary/findings.js';
import { LEDGER_RULE } from './buffer-ledger.js';

/**
 * Rules of the buffer ledger (buffer-ledger.ts): RDMA operations checked against the buffers an
 * upper layer advertised. They fire only on connections whose upper layer is decoded. Joined into
 * the catalog by src/analysis/rules-catalog.ts.
 */
export const LEDGER_RULES: readonly RuleDef[] = [
  rule(
    LEDGER_RULE.outside,
    'error',
    'RFC 5040 §6.4.2, §6.5; ULP-NOTES 3.6 (1)',
    null,
    'RDMA Write or Read Request outside the buffer the peer advertised',
    'The peer advertised this STag for a request (SMB2 Buffer Descriptor V1, RPC-over-RDMA chunk segment, iSER STag and base offset, NVMe keyed SGL) with a base TO and a length; this RDMA Write, or this RDMA Read Request\'s Data Source, reaches octets outside [base, base + length). A real receiver raises a base-and-bounds violation (RDMAP Terminate, DDP tagged error 0x02 "Base or bounds violation").',
  ),
  rule(
    LEDGER_RULE.notAdvertised,
    'error',
    'RFC 5040 §6.4.2; ULP-NOTES 3.6 (1)',
    null,
    'RDMA access to an STag the peer never advertised',
    "The upper layer was followed from the connection's first message, and no request of the peer advertised this STag: the RDMA Write or RDMA Read Request targets memory the peer did not expose for this connection (an invalid STag: DDP tagged error 0x00 at a real receiver).",
  ),
  rule(
    LEDGER_RULE.wrongAccess,
    'error',
    'RFC 5040 §6.4.2; ULP-NOTES 3.6 (1)',
    null,
    'RDMA access of the wrong kind to an advertised buffer',
    'The buffer was advertised for one kind of remote access (data the peer writes, e.g. SMB2 READ or an NFS write chunk; or data the peer reads, e.g. SMB2 WRITE or an NFS read chunk) and the peer made the other: an RDMA Write into a buffer meant to be read, or an RDMA Read from one meant to be written. An STag registered without that access right fails at a real receiver (access violation).',
  ),
  rule(
    LEDGER_RULE.afterResponse,
    'error',
    'ULP-NOTES 3.6 (4); MS-SMB2 3.2.5.11; RFC 8166 §3.4',
    null,
    'RDMA access to a buffer after its request was answered',
    "The response of the request that advertised this buffer has been sent, and the requester releases (deregisters) the buffer on the response, yet data still moves through it. All data placement for a request must precede its response; RDMAP orders an RDMA Write before a later Send on the same connection, so this is the sender's mistake.",
  ),
  rule(
    LEDGER_RULE.afterInvalidate,
    'error',
    'RFC 5040 §6.10 (Send with Invalidate); ULP-NOTES 3.6 (2)',
    null,
    'RDMA access to an STag after it was invalidated',
    'A Send with Invalidate invalidated this STag at its owner; any later RDMA Write or Read Request using it fails at a real receiver (invalid STag) and shows a use-after-invalidate in the sender.',
  ),
  rule(
    LEDGER_RULE.invalidateUnknown,
    'error',
    'RFC 5040 §6.10; ULP-NOTES 3.6 (2)',
    null,
    'Send with Invalidate of an STag the receiver did not advertise',
    'A Send with Invalidate must name an STag of the receiver that belongs to the request being answered. This one names an STag the receiver never advertised on the connection (or one already invalidated): a real receiver completes the Send with an error or invalidates a buffer it still uses.',
  ),
  rule(
    LEDGER_RULE.irdExceeded,
    'warning',
    'MS-SMBD Appendix A; RFC 6581 §3 (IRD/ORD); ULP-NOTES 3.6 (3)',
    null,
    "More RDMA Read Requests in flight than the peer's announced IRD",
    "The peer announced how many incoming RDMA Read Requests it can hold (its IRD) in a block of the upper layer's private data (MS-SMBD Appendix A). More Read Requests were outstanding at once than that: a real RNIC terminates the connection or stalls.",
  ),
  rule(
    LEDGER_RULE.capacity,
    'info',
    null,
    null,
    'More advertised buffers live at once than the ledger keeps',
    'The upper layer advertised more buffers than the ledger keeps per connection without retiring them (answers not captured, or a peer that never answers). The oldest are forgotten; accesses to them are no longer checked. Said once per connection.',
  ),
];
