import type { RuleDef } from '../vocabulary/findings.js';

/** Rules of this layer (ids, severities, references). Joined into the catalog by src/analysis/rules-catalog.ts. */
export const TCP_RULES: readonly RuleDef[] = [
  {
    id: 'tcp.overlap-conflict',
    severity: 'warning',
    ref: 'RFC 9293 §3.10.7.4',
    rfcErrorCode: null,
    summary: 'Retransmitted TCP bytes differ from the first copy',
    explanation:
      'A segment overlapped sequence space already seen in this direction (delivered, or held out of order), ' +
      'and some of the overlapping octets differ from the first copy. A correct sender retransmits the same bytes, ' +
      'so this points at a broken TCP offload, a middlebox rewriting payload, or two capture sources merged badly. ' +
      'The first copy is kept and passed on; the frames named are the first copy and the conflicting one. ' +
      'Delivered bytes are compared only while they are still in the per-direction history (historyBytes).',
  },
  {
    id: 'tcp.buffer-cap',
    severity: 'warning',
    ref: null,
    rfcErrorCode: null,
    summary: 'Out-of-order buffer cap reached; the oldest hole was declared a gap',
    explanation:
      'The reassembler holds out-of-order bytes while it waits for a hole to fill, within a per-flow and a total ' +
      'budget (maxBufferedPerFlow, maxBufferedTotal). When a budget is reached it gives up on the oldest hole: the ' +
      'missing bytes become a gap and the held bytes after it are delivered. If the missing bytes appear later they ' +
      'are ignored. Raise the budgets if the capture has deep reordering; otherwise this usually means heavy loss.',
  },
  {
    id: 'tcp.data-after-fin',
    severity: 'warning',
    ref: 'RFC 9293 §3.10.7.4',
    rfcErrorCode: null,
    summary: 'Payload beyond the sequence number of the FIN',
    explanation:
      'The FIN occupies the sequence number after the last data octet of a direction, so no payload may lie at or ' +
      'beyond it. Such octets are not delivered to the protocol layers. A sender doing this is broken, or the ' +
      'capture mixes two connections that reused the same addresses and ports.',
  },
  {
    id: 'tcp.capture-loss',
    severity: 'info',
    ref: null,
    rfcErrorCode: null,
    summary: 'Previous segment(s) not captured',
    explanation:
      'Sequence space that the sender did send was never seen in the capture: bytes after it were captured, the ' +
      'peer acknowledged beyond it, the direction closed, the capture ended, or a snaplen cut the segment short. ' +
      'The range is delivered to the protocol layers as an explicit gap so they can resynchronise. This is a ' +
      'property of the capture (drops, snaplen, a missing mirror direction), not necessarily of the network.',
  },
  {
    id: 'tcp.snaplen-cut',
    severity: 'info',
    ref: null,
    rfcErrorCode: null,
    summary: "Segments cut by the capture's snaplen",
    explanation:
      "The capture kept only the first octets of these frames (a snaplen: Chelsio's hardware tracer keeps 128 by " +
      'default, tcpdump -s does the same). The IP length says how many octets each segment carried, so the stream ' +
      'positions after a cut are exact: MPA frames across the missing octets when they fall inside an FPDU, and ' +
      'every layer decodes the headers that are present and skips the checks that need missing octets (CRC ' +
      "'not-captured', upper-layer payloads cut). Reported once per direction, with the count: a property of the " +
      'capture, not of the network.',
  },
];
