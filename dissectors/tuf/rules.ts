import { rule, type RuleDef } from '../../src/vocabulary/findings.js';

const r = rule;

/**
 * TUF rules (draft-ietf-tsvwg-tcp-ulp-frame-00). The draft defines no error codes: each rule is
 * named after what it breaks, cites the section, and its severity says how sure the evidence is.
 */
export const TUF_RULES: readonly RuleDef[] = [
  // --- PDU alignment mode (§5) ---
  r(
    'tuf.second-key',
    'error',
    'draft-ietf-tsvwg-tcp-ulp-frame-00 §5',
    null,
    'A second framing key in one direction',
    "All framing PDUs sent on the same connection in the same direction must use the same key (§5). A framing header whose Length chains on (or whose segment passes the receiver's test) under another key was sent with a second key: a receiver testing against the key the ULP signalled (§5.4) drops those PDUs to its slow path.",
  ),
  r(
    'tuf.length-contradicted',
    'error',
    'draft-ietf-tsvwg-tcp-ulp-frame-00 §5',
    null,
    "A framing PDU's Length is contradicted by the in-order stream",
    "Length counts the ULP PDUs after the 8-octet header (§5), so the next framing header sits at 8 + Length octets on. Here the octets there are no framing header under the direction's key, and the key appears elsewhere: the Length is wrong (or octets were inserted or lost by the sender). Framing resumes at the next header found.",
  ),
  r(
    'tuf.length-too-long',
    'warning',
    'draft-ietf-tsvwg-tcp-ulp-frame-00 §3',
    null,
    'Length above 65528',
    'A framing PDU carries at most 2^16 - 8 (65528) octets of ULP PDUs (§3), so that header and PDUs fit a 16-bit IP length budget.',
  ),
  r(
    'tuf.two-pdus-in-segment',
    'warning',
    'draft-ietf-tsvwg-tcp-ulp-frame-00 §5.1',
    null,
    'A TCP segment carries octets of two framing PDUs',
    'A framing-aware TCP must not send a segment containing octets of more than one sending operation (§5.1), and each framing PDU is one: a receiver cannot place such a segment on the fast path (§5.4). Outside a longer run this is the sender coalescing (or a middlebox merging two segments).',
  ),
  r(
    'tuf.middlebox',
    'warning',
    'draft-ietf-tsvwg-tcp-ulp-frame-00 §5.2',
    null,
    'A run of segments with no complete framing PDU: a resegmenting middlebox',
    'A continuous stream of segments that cut across framing PDU boundaries and contain no complete framing PDU implies a resegmenting middlebox (§5.2 case 6); the ULP SHOULD disable framing or switch to marker mode. The key was learnt by chaining Lengths through the in-order stream.',
  ),
  r(
    'tuf.sender-split',
    'info',
    'draft-ietf-tsvwg-tcp-ulp-frame-00 §5.2',
    null,
    'A framing PDU sent in several segments (a sender exception case)',
    "When a framing PDU cannot go in one segment (EMSS reduced, small window, probes: §5.2 cases 1-5) the sender sends it as several segments that each fail the receiver's test. Not an error: the segments split only inside framing PDUs, never across them.",
  ),
  // --- marker mode (§6) ---
  r(
    'tuf.marker-copies-differ',
    'error',
    'draft-ietf-tsvwg-tcp-ulp-frame-00 §6',
    null,
    'The two copies of Next PDU Offset in a marker disagree',
    'A marker holds the Next PDU Offset twice so that a marker split across segments still has one whole copy (§6). Two whole copies that differ leave a receiver that sees only one of them with a wrong PDU position. The copy consistent with the other markers is used.',
  ),
  r(
    'tuf.marker-offset-contradicted',
    'error',
    'draft-ietf-tsvwg-tcp-ulp-frame-00 §6',
    null,
    'A marker points inside a PDU that other markers delimit',
    'Each marker points at the next PDU (§6). A marker inside a PDU must point where the markers before it in that PDU point; this one points elsewhere (into the PDU, or into a marker), so a receiver that finds PDUs from it after a loss places data at the wrong octet.',
  ),
  r(
    'tuf.marker-past-end',
    'warning',
    'draft-ietf-tsvwg-tcp-ulp-frame-00 §6',
    null,
    'A marker points past the end of the stream',
    "The stream was closed (FIN) before the octet a marker points at. The last PDU's marker rightly points at the end of the stream (where the next PDU would start); one pointing beyond it promised a PDU that never came.",
  ),
  r(
    'tuf.marker-search-budget',
    'warning',
    'draft-ietf-tsvwg-tcp-ulp-frame-00 §6',
    null,
    'Marker-grid search gave up: its work budget is spent',
    'Finding marker mode without being told means trying every interval from each zero marker (§6 leaves the interval to the ULP). Each direction may spend work in proportion to the octets it carries, so the search stays linear in the capture whatever the bytes are; octets that look like markers everywhere exhaust it. The search then pauses in that direction until more octets grant more work (alignment mode is still looked for), so marker mode may be found late or not at all. Said only of a flow that is TUF (forced with --tuf, or found in the other direction): on other TCP payload the search stops quietly. With --tuf interval=N the search is not needed.',
  ),
  r(
    'tuf.first-marker-not-zero',
    'warning',
    'draft-ietf-tsvwg-tcp-ulp-frame-00 §6',
    null,
    'The first marker (at the enablement point) is not zero',
    'The first marker precedes any framed PDU and so necessarily has a Next PDU Offset of 0 (§6). Seen only when --tuf gives the start: without it a zero marker is how the start is found.',
  ),
];
