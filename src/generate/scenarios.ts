/**
 * The MPA scenarios of `mpa-dissect generate`: presets of the knobs (src/generate/knobs.ts) on the
 * knob-driven connection. One entry each; `generate --list` prints them.
 */
import type { Scenario } from './scenario-table.js';

export const MPA_SCENARIOS: readonly Scenario[] = [
  {
    name: 'clean',
    summary:
      'A clean Rev 1 connection: startup, Sends, Writes and Reads both ways, CRC, no markers (every knob at its default)',
  },
  {
    name: 'markers',
    summary: 'Clean, markers both ways (RFC 5044 §4.3), FPDUs cut at MSS boundaries',
    knobs: { markers: 'both', segmentation: 'mss' },
  },
  {
    name: 'rev2-rtr',
    summary: 'Rev 2 (RFC 6581) peer-to-peer startup with a zero-length Write RTR, then clean traffic',
    knobs: { rev: '2', rtr: 'write' },
  },
  {
    name: 'rev2-read-rtr',
    summary: 'Rev 2 peer-to-peer with a zero-length Read RTR answered by a zero-length Read Response',
    knobs: { rev: '2', rtr: 'read' },
  },
  {
    name: 'all-messages',
    summary: 'Every RDMAP message kind: Send variants, Write, Read, Atomics, Immediate Data, a Terminate at the end',
    knobs: { messages: 'send,send-se,send-inv,write,read,atomic,immediate,terminate', count: '16' },
  },
  {
    name: 'packed',
    summary: 'Several whole FPDUs per TCP segment (small messages packed up to the MSS)',
    knobs: { segmentation: 'packed', size: '200', count: '24' },
  },
  {
    name: 'middlebox',
    summary: 'A re-segmenting middlebox: segments cut at random places, markers both ways',
    knobs: { segmentation: 'random', markers: 'both' },
  },
  {
    name: 'siw-large',
    summary: 'FPDUs larger than the MSS (siw with GSO), cut every MSS octets',
    knobs: { segmentation: 'large', 'max-ulpdu': '8000', size: '20000' },
  },
  {
    name: 'bad-crc',
    summary:
      'One Initiator FPDU with a corrupted CRC (error 2); the receiver drops it, so the next Send shows an MSN gap',
    knobs: { impair: 'bad-crc', count: '12', messages: 'send,write', size: '800' },
  },
  {
    name: 'bad-fpduptr',
    summary: 'One Initiator FPDU whose markers point 8 octets off (error 3), valid CRC',
    knobs: { impair: 'bad-fpduptr', markers: 'both', size: '3000', 'max-ulpdu': '1400' },
  },
  { name: 'pad-nonzero', summary: 'One Initiator FPDU with non-zero PAD octets', knobs: { impair: 'pad-nonzero' } },
  { name: 'bad-key', summary: 'An MPA Request with a wrong key (error 4)', knobs: { impair: 'bad-key' } },
  {
    name: 'pd-too-long',
    summary: 'An MPA Request whose PD_Length is above 512 (error 4)',
    knobs: { impair: 'pd-too-long' },
  },
  {
    name: 'initiator-initiator',
    summary: 'Both ends send an MPA Request (Initiator/Initiator startup, error 4)',
    knobs: { impair: 'initiator-initiator' },
  },
  {
    name: 'reorder',
    summary: 'Segments reordered within each direction (no finding: reassembly restores the order)',
    knobs: { impair: 'reorder', count: '16' },
  },
  {
    name: 'duplicate',
    summary: 'Duplicated segments (retransmissions, no finding)',
    knobs: { impair: 'duplicate', count: '16' },
  },
  {
    name: 'overlap',
    summary: 'Overlapping retransmissions of the same octets (no finding)',
    knobs: { impair: 'overlap', count: '16', segmentation: 'mss' },
  },
  {
    name: 'loss',
    summary: 'One Initiator segment missing from the capture',
    knobs: { impair: 'loss', count: '12', messages: 'send,write', size: '800' },
  },
  {
    name: 'loss-send',
    summary:
      'One Initiator segment with a Send missing from the capture: the next Send shows the MSN gap (RFC 5040 §5.1)',
    knobs: { impair: 'loss', count: '12', messages: 'send', size: '800' },
  },
  {
    name: 'siw-pad',
    summary: 'Sender mistake (SoftUiWarp): PAD of (ULPDU_Length+2) mod 4 octets',
    knobs: { impair: 'wrong-pad', messages: 'send,write' },
  },
  { name: 'no-pad', summary: 'Sender mistake: no PAD at all', knobs: { impair: 'no-pad', messages: 'send,write' } },
  {
    name: 'length-counts-header',
    summary: 'Sender mistake: ULPDU_Length counts its own 2 octets',
    knobs: { impair: 'length-counts-header', messages: 'send,write' },
  },
  {
    name: 'length-counts-crc',
    summary: 'Sender mistake: ULPDU_Length counts the CRC',
    knobs: { impair: 'length-counts-crc', messages: 'send,write' },
  },
  {
    name: 'length-le',
    summary: 'Sender mistake: ULPDU_Length sent little-endian',
    knobs: { impair: 'length-le', messages: 'send,write' },
  },
  {
    name: 'marker-origin',
    summary: 'Sender mistake: markers counted from the start of the MPA Request instead of SeqStart',
    knobs: { impair: 'marker-origin', markers: 'both', segmentation: 'mss', size: '3000' },
  },
  {
    name: 'responder-first',
    summary: "The Responder sends an FPDU before the Initiator's first FPDU (RFC 5044 §7.1.2 rule 4)",
    knobs: { impair: 'responder-first' },
  },
  {
    name: 'mid-stream',
    summary: 'Capture started mid-stream: no handshake, no startup frames',
    knobs: { start: 'mid-stream', count: '12' },
  },
  {
    name: 'mid-stream-crc-off',
    summary: 'Captured mid-stream without CRC: framing found on chained DDP headers, markers both ways',
    knobs: { start: 'mid-stream', count: '12', crc: 'off', markers: 'both' },
  },
  {
    name: 'mid-stream-no-marker',
    summary:
      'Captured mid-stream without CRC, markers negotiated both ways but no marker position in the octets captured: FPDUs without markers is all the capture shows',
    knobs: { start: 'mid-stream', crc: 'off', markers: 'both', count: '10', size: '0', messages: 'send' },
  },
  {
    name: 'mid-stream-loss',
    summary:
      'Captured mid-stream without CRC, a segment lost from the capture before the stream had said it was MPA: the FPDUs before the hole are framed from the octets held',
    knobs: {
      start: 'mid-stream',
      crc: 'off',
      markers: 'none',
      count: '15',
      size: '0',
      messages: 'send-se,immediate',
      segmentation: 'one-per-segment',
      impair: 'loss',
      close: 'fin',
    },
  },
  {
    name: 'mid-stream-bad-crc',
    summary:
      "Captured mid-stream with CRC, the second FPDU's CRC bad: framing starts at the first octet, whose FPDU chains to the verified ones, and the bad one is a CRC error",
    knobs: {
      start: 'mid-stream',
      crc: 'on',
      markers: 'none',
      count: '9',
      size: '500',
      'max-ulpdu': '256',
      impair: 'bad-crc',
    },
  },
  {
    name: 'mid-stream-one-marker',
    summary:
      'Captured mid-stream with CRC and markers, one marker position in the octets of a direction: its FPDUPTR and the CRCs show markers are on',
    knobs: {
      start: 'mid-stream',
      crc: 'on',
      markers: 'both',
      count: '10',
      size: '64',
      mss: '9000',
      segmentation: 'one-per-segment',
    },
  },
  {
    name: 'loss-markers',
    summary:
      'A segment lost from the capture with markers on: framing resumes at the first octet after the hole, chained to the FPDU the next marker points to',
    knobs: { markers: 'i2r', crc: 'on', count: '6', size: '500', impair: 'loss', segmentation: 'one-per-segment' },
  },
  {
    name: 'ipv6-vlan',
    summary: 'IPv6 in an 802.1Q VLAN, markers both ways',
    knobs: { ip: '6', vlan: '100', markers: 'both' },
  },
  {
    name: 'seq-wrap',
    summary: 'Sequence numbers wrapping past 2^32 in both directions, markers both ways',
    knobs: { 'seq-wrap': 'yes', markers: 'both', segmentation: 'mss' },
  },
];
