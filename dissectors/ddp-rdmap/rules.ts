import { rule, type RuleDef } from '../../src/vocabulary/findings.js';

const r = rule;

/**
 * Rules of the DDP (RFC 5041) and RDMAP (RFC 5040, RFC 7306, RFC 6581 RTR) layer. Joined into the
 * catalog by src/analysis/rules-catalog.ts. Source tags in brackets are those of SPEC-NOTES Part 2;
 * rules resting on a fact SPEC-NOTES marks provisional are warnings and say so.
 */
export const DDP_RULES: readonly RuleDef[] = [
  // --- DDP header ---
  r('ddp.truncated', 'error', 'RFC 5041 (DDP header layout) [WS][siw]', null, 'ULPDU shorter than its DDP header',
    'A tagged DDP header is 14 octets and an untagged one 18 (the T bit of the first octet says which). The ULPDU handed up by MPA is shorter, so the segment cannot be placed; it is decoded as far as it goes and left out of message bookkeeping.'),
  r('ddp.invalid-dv', 'error', 'RFC 5041; RFC 5044 Appendix C [siw]', null, 'DDP version (DV) not the one the MPA startup implies',
    'After a Rev 1 or Rev 2 MPA startup DDP runs version 1; after a Rev 0 (RDMA Consortium) startup, version 0 (RFC 5044 Appendix C, Figure 14). Without a captured startup, DV must be 0 or 1. A receiver answers a wrong DV with Terminate DDP/Tagged 0x04 or DDP/Untagged 0x06 "Invalid DDP version".'),
  r('ddp.version-mix', 'error', 'RFC 5044 Appendix C', null, 'DDP/RDMAP versions mixed within one connection',
    'RFC 5044 Appendix C: no mixing of versions between DDP and RDMAP, and the DDP/RDMAP version must be identical in the two directions. Checked when the MPA startup was not captured (with a captured startup ddp.invalid-dv / rdmap.invalid-rv apply instead): DV differs from RV in a segment, or the version differs from the one the connection started with.'),
  r('ddp.reserved-nonzero', 'warning', 'RFC 5041 [WS masks] [RFC?]', null, 'DDP reserved control bits not zero',
    'Bits 0x3C of the DDP control octet are reserved. That they must be sent as zero (and ignored on receipt) rests on memory of the RFC text, not a checked copy (SPEC-NOTES 1.1 [RFC?]); hence a warning.'),
  r('ddp.invalid-qn', 'error', 'RFC 5040 [IANA RDMAP DDP Untagged Queue Numbers][siw]', null, 'Untagged opcode on the wrong queue number',
    'RDMAP uses QN 0 for the Send variants, 1 for Read Requests, 2 for Terminate and 3 for Atomic Responses (IANA). QN 4 and above are unassigned; a receiver answers Terminate DDP/Untagged 0x01 "Invalid QN".'),
  r('ddp.msn-first', 'warning', 'RFC 5041 [siw] [RFC?]', null, 'First message on a queue does not have MSN 1',
    'With the MPA startup captured, the first untagged message on each queue of a direction should carry MSN 1. This rests on Linux siw\'s behaviour (receive MSN initialised to 1), not on checked RFC text (SPEC-NOTES "Still provisional" 1); hence a warning.'),
  r('ddp.msn-gap', 'error', 'RFC 5041 [siw]', null, 'MSN skipped ahead: messages missing on a queue',
    'MSN counts messages per queue and direction, +1 per message (not per segment); arithmetic is modulo 2^32 (the wrap rule itself is provisional). A jump means messages were never sent; a receiver answers Terminate DDP/Untagged 0x03 "Invalid MSN - MSN range is not valid". When data is missing from the capture (a TCP capture gap, or segments left out because their CRC failed) the same jump is reported as ddp.capture-loss instead.'),
  r('ddp.msn-duplicate', 'error', 'RFC 5041 [siw]', null, 'MSN repeats an earlier message on the queue',
    'A new message reused the MSN of a message already received on the same queue and direction (TCP retransmissions are removed before this layer, so this is what the sender put on the wire).'),
  r('ddp.msn-reorder', 'error', 'RFC 5041 [siw]', null, 'Message arrived after later MSNs on its queue',
    'A message whose MSN had been skipped (reported as a gap) arrived after later messages on the same queue. Over TCP, DDP messages of one queue arrive in order.'),
  r('ddp.mo-byte-order', 'error', 'RFC 5041 §4', null, 'Untagged Message Offset sent in host (little-endian) byte order',
    'MO of a later segment of an untagged message must equal the octets the message already carried, in network byte order. This one equals that offset only byte-swapped (SoftUiWarp writes MO in host order after the first segment: 65014 shows as 0xF6FD0000). Reported once per direction; the segment is taken at the offset it means instead of raising ddp.invalid-mo.'),
  r('ddp.invalid-mo', 'error', 'RFC 5041 [siw siw_send_check_ntoh]', null, 'Message Offset not contiguous',
    'MO is the offset of a segment\'s payload in its message: 0 for the first segment, then the previous MO plus the previous payload length, with no gap or overlap. A receiver answers Terminate DDP/Untagged 0x04 "Invalid MO".'),
  r('ddp.missing-last', 'error', 'RFC 5041 [WS][siw]', null, 'Message ended without a segment carrying L',
    'L=1 marks the last segment of a DDP message. The next message on the same queue started while this one still awaited its L segment, so this message was never completed.'),
  r('ddp.to-discontinuity', 'error', 'RFC 5041 [siw siw_write_check_ntoh, siw_rresp_check_ntoh]', null, 'Tagged Offset not contiguous within a tagged message',
    'All segments of one tagged message carry the same STag, and each TO equals the previous TO plus the previous payload length. A receiver answers Terminate DDP/Tagged 0x01 "Base or bounds violation".'),
  r('ddp.tagged-interleaved', 'warning', 'RFC 5041 [siw]', null, 'New tagged message started while another was incomplete',
    'A tagged segment with a new STag arrived while an earlier tagged message in the same direction had not seen its L segment. Linux siw keeps one tagged receive context and would fail the STag check; whether the RFC forbids interleaving was not verified, hence a warning. Both messages keep being tracked.'),
  r('ddp.after-crc-discard', 'info', 'RFC 5044 §8', null, 'DDP sequence irregularity explained by a segment left out for its bad CRC',
    'A receiver discards an FPDU whose CRC does not verify (MPA error 2, reported as mpa.crc-mismatch), and so does this analyzer for sequence bookkeeping. The MSN, MO or TO jump that follows is the consequence of that discard, not of data missing from the capture, and is named for it.'),
  r('ddp.capture-loss', 'info', null, null, 'DDP sequence irregularity explained by data missing from the capture',
    'An MSN, MO or TO jump, a message without its L segment, or an unanswered pairing that is plausibly due to bytes missing from the capture (a TCP capture gap, or segments left out because their CRC failed or they followed an MPA error). The message names the check and what explains it.'),
  r('ddp.incomplete-message', 'info', 'RFC 5041', null, 'Connection closed with a DDP message incomplete',
    'The direction closed (FIN or RST) while a message still awaited its L segment.'),

  // --- RDMAP header ---
  r('rdmap.invalid-rv', 'error', 'RFC 5040; RFC 5044 Appendix C [siw]', null, 'RDMAP version (RV) not the one the MPA startup implies',
    'RV is 1 after a Rev 1 or Rev 2 MPA startup and 0 after a Rev 0 (RDMA Consortium) one (RFC 5044 Appendix C); without a captured startup it must be 0 or 1. A receiver answers Terminate RDMAP/Remote Operation 0x05 "Invalid RDMAP version".'),
  r('rdmap.reserved-nonzero', 'warning', 'RFC 5040 [WS][siw] [RFC?]', null, 'RDMAP reserved field not zero',
    'The Rsv bits of the RDMAP control octet, bytes 2..5 of untagged Read Request, Send, Send with SE and Terminate segments (SPEC-NOTES 2.2), the 13 reserved bits of the Terminate header-control word and the reserved bits of the Atomic OpCode word. Sending them as zero rests on memory of the RFC text (SPEC-NOTES 1.1 [RFC?]); hence a warning.'),
  r('rdmap.unexpected-opcode', 'error', 'RFC 5040; RFC 7306 [IANA RDMAP Message Operation Codes]', null, 'Unassigned or experimental RDMAP opcode',
    'Opcodes 0xC-0xE are unassigned and 0xF is reserved for experiments (IANA). A receiver answers Terminate RDMAP/Remote Operation 0x06 "Unexpected OpCode".'),
  r('rdmap.opcode-buffer-model', 'error', 'RFC 5040 [siw templates][WS]', null, 'Opcode sent with the wrong DDP buffer model',
    'RDMA Write and Read Response use tagged buffers (T=1); Read Request, the Sends, Terminate, Immediate Data and the Atomics use untagged buffers (T=0).'),
  r('rdmap.rfc7306-qn', 'warning', 'RFC 7306 [RFC?]', null, 'Immediate Data or Atomic Request on an unexpected queue',
    'Immediate Data is expected on QN 0 and the Atomic Request on QN 1. Both rest on memory of RFC 7306, not on a checked copy or an implementation (SPEC-NOTES "Still provisional" 4); hence a warning.'),
  r('rdmap.not-single-segment', 'error', 'RFC 5040; RFC 7306 [siw]', null, 'Single-segment RDMAP message split or sized wrongly',
    'A Read Request (46 octets), Terminate, Atomic Request (70) and Atomic Response (30) are each one DDP segment: L=1, MO=0, and no payload beyond the header (siw rejects a Read Request with payload).'),
  r('rdmap.truncated-header', 'error', 'RFC 5040; RFC 7306 [WS][siw]', null, 'ULPDU too short for the RDMAP header its opcode carries',
    'A Read Request needs 28 octets after the DDP header, an Atomic Request 52, an Atomic Response 12, a Terminate 4 (plus the segment length and copied DDP header that its M and D bits announce).'),
  r('rdmap.immediate-length', 'warning', 'RFC 7306 [RFC?]', null, 'Immediate Data segment not 8 octets of payload',
    'Immediate Data (opcodes 0x8, 0x9) is expected to carry exactly eight octets after the untagged header. The layout rests on memory of RFC 7306 only (SPEC-NOTES "Still provisional" 4); hence a warning.'),

  // --- Read and Atomic pairing ---
  r('rdmap.read-response-unsolicited', 'error', 'RFC 5040 [siw]', null, 'Read Response with no outstanding Read Request',
    'A Read Response started while the peer had no unanswered Read Request. Not reported before the first pairing when the MPA startup (and so maybe the Requests) precede the capture, and reported as ddp.capture-loss when the peer\'s direction lost data.'),
  r('rdmap.read-response-mismatch', 'error', 'RFC 5040 [siw siw_rresp_check_ntoh]', null, 'Read Response STag/TO differ from the Read Request\'s Data Sink',
    'Read Responses answer Read Requests in order, and each is placed at the Data Sink STag and TO the Request named. siw checks both. Not checked for the zero-length Read RTR (siw: "must not be checked").'),
  r('rdmap.read-request-byte-order', 'error', 'RFC 5040 §4', null, 'Read Request field sent in host (little-endian) byte order',
    'Every RDMAP field is in network byte order. When the Read Response carries exactly the byte-swapped Data Sink STag and Tagged Offset of its Request, the requester wrote the Request\'s fields in host order (SoftUiWarp does: a 1024-octet Read shows as 262144). Reported once per field and direction with both readings; the Response is then paired and its length checked under the swapped reading instead of raising rdmap.read-response-mismatch and rdmap.read-response-size. The Data Source fields cannot be checked against anything on the wire: they are reported because the same Request\'s sink fields are swapped.'),
  r('rdmap.read-response-size', 'error', 'RFC 5040 [siw]', null, 'Read Response length differs from the RDMA Read Message Size',
    'The Read Response message (all its segments until L) must be exactly as long as the Read Request asked: longer overruns the sink buffer, shorter leaves it partly unwritten.'),
  r('rdmap.read-unanswered', 'warning', 'RFC 5040', null, 'Read Request never answered before the connection closed',
    'The responder\'s direction closed (FIN or RST) with this Read Request still unanswered. Not reported when the capture simply ended.'),
  r('rdmap.ird-exceeded', 'warning', 'RFC 6581 (IRD/ORD) [siw][cxgb4][irdma]', null, 'More outstanding Read Requests than the negotiated IRD/ORD allow',
    'The number of unanswered Read Requests from one side exceeds min(its ORD, the peer\'s IRD) from the RFC 6581 enhanced startup (0x3FFF, "no value" in Intel drivers, is ignored). The meaning of the IRD/ORD words rests on driver behaviour, not checked RFC wording (SPEC-NOTES RFC 6581 negotiation rules); hence a warning. The zero-length Read RTR is not counted.'),
  r('rdmap.atomic-response-unmatched', 'warning', 'RFC 7306 [WS] [RFC?]', null, 'Atomic Response whose Original Request Identifier matches no Atomic Request',
    'An Atomic Response echoes the Request Identifier of an Atomic Request from the peer. Pairing by that identifier rests on the Wireshark field names only (SPEC-NOTES 2.7); hence a warning.'),

  // --- RFC 6581 RTR ---
  r('rdmap.rtr-mismatch', 'warning', 'RFC 6581 [siw][cxgb4][irdma] [RFC?]', 7, 'Initiator\'s first FPDU is not the negotiated zero-length RTR',
    'In peer-to-peer mode (A bit) the Initiator\'s first FPDU must be the RTR the Responder chose: a zero-length Send (QN 0, MSN 1), a zero-length RDMA Write, or a zero-length Read Request (QN 1, MSN 1, size 0) answered by a zero-length Read Response. The peer answers a mismatch with Terminate LLP/MPA 0x07 "No matching RTR option". The exact RTR wire rules rest on implementations, not checked RFC text (SPEC-NOTES "Still provisional" 3); hence a warning. STag and TO of zero-length RTRs are not checked (siw).'),
  r('rdmap.rtr-without-p2p', 'info', 'RFC 6581 [cxgb4]', null, 'First FPDU looks like an RTR although peer-to-peer mode was not negotiated',
    'The Initiator began with a zero-length RDMA Write or Read Request without the RFC 6581 A bit. Chelsio cxgb4 does this after falling back to Rev 1.'),

  // --- Terminate ---
  r('rdmap.terminate', 'info', 'RFC 5040 [IANA RDDP errors][WS][siw]', null, 'Terminate message',
    'The sender aborts the RDMAP stream. The message decodes layer, error type and code, the segment whose headers the Terminate copies (matched against the peer\'s recent segments) and, for LLP errors, the MPA error that explains it.'),
  r('rdmap.terminate-unexplained', 'warning', 'RFC 5040; RFC 5044 §8; RFC 6581', null, 'LLP (MPA) Terminate whose cause is not visible in the capture',
    'A Terminate with layer LLP reports an MPA error (CRC, marker, startup frame, RFC 6581 IRD or RTR problems) detected on the peer\'s half connection, but no such error was seen there: the cause lies outside the capture (e.g. corruption only the receiver saw, or a local catastrophic error).'),
  r('rdmap.terminate-unknown-code', 'warning', 'RFC 5040 [IANA RDDP errors]', null, 'Terminate with an unregistered layer, error type or code',
    'The (Layer, EType, Error Code) triple is not in the IANA RDMAP, DDP or MPA error registries.'),
  r('rdmap.after-terminate', 'warning', 'RFC 5040 [RFC?]', null, 'Segments sent after a Terminate',
    'A Terminate ends the RDMAP stream; the sender should send nothing more on it. This rests on memory of RFC 5040, not on a checked copy; hence a warning. Reported once per direction.'),
];
