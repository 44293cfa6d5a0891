/**
 * One TCP connection offered to both framings the specifications define above TCP: MPA (RFC 5044)
 * and ULP Framing for TCP (draft-ietf-tsvwg-tcp-ulp-frame-00). Each sees every octet until one
 * claims the flow; from then on the other sees nothing more, so a flow is MPA or TUF, never both.
 * MPA is fed first and wins whenever it has recognised the flow: its startup frames and CRCs are
 * far stronger evidence than a recurring framing key (and MPA FPDUs can pass TUF's receiver test).
 */
import type { DirectionConsumer, EndReason, FlowConsumer, StreamChunk } from '../tcp/stream.js';
import type { MpaFlow } from '../../dissectors/mpa/mpa-flow.js';
import type { TufFlow } from '../../dissectors/tuf/tuf-flow.js';
import { crc32c, readWireCrc } from '../../dissectors/mpa/crc32c.js';
import { ULPDU_HEADER_BYTES } from '../../dissectors/mpa/ulpdu.js';
import { plausibleDdpSegmentStart } from '../../dissectors/ddp-rdmap/plausible.js';

export class FramingFlow implements FlowConsumer {
  private readonly tee0: Tee;
  private readonly tee1: Tee;

  constructor(
    public mpa: MpaFlow | null,
    public tuf: TufFlow | null,
  ) {
    this.tee0 = new Tee(this, 0);
    this.tee1 = new Tee(this, 1);
    if (tuf) tuf.claimer = this;
  }

  /** Read once per direction by the reassembler: a pair made on demand, not kept by every flow. */
  get directions(): readonly [DirectionConsumer, DirectionConsumer] {
    return [this.tee0, this.tee1];
  }

  /** TUF found framing: it may have the flow only if MPA has not recognised it. */
  claimForTuf(): boolean {
    if (this.mpa?.isMpa) return false;
    this.mpa = null;
    return true;
  }

  /** After MPA saw octets: once it recognised the flow, TUF is let go. */
  settle(): void {
    if (this.tuf && this.mpa?.isMpa) {
      this.tuf.abandon();
      this.tuf = null;
    }
  }
}

class Tee implements DirectionConsumer {
  constructor(
    private readonly f: FramingFlow,
    private readonly dir: 0 | 1,
  ) {}

  data(c: StreamChunk): void {
    const f = this.f;
    if (f.mpa) {
      f.mpa.direction(this.dir).data(c);
      f.settle();
    }
    f.tuf?.data(this.dir, c);
  }

  gap(offset: number, seq: number, length: number, cut?: boolean): void {
    const f = this.f;
    if (f.mpa) {
      f.mpa.direction(this.dir).gap(offset, seq, length, cut);
      f.settle();
    }
    f.tuf?.gap(this.dir, offset, seq, length);
  }

  end(reason: EndReason, frame: number | null): void {
    const f = this.f;
    if (f.mpa) {
      f.mpa.direction(this.dir).end(reason, frame);
      f.settle();
    }
    f.tuf?.end(this.dir, reason, frame);
  }
}

/**
 * TUF's test for a candidate framing PDU that is really an MPA FPDU: an FPDU with CRC whose
 * ULPDU_Length is a multiple of 4 is exactly ULPDU_Length + 8 octets long (2 + ULPDU + 2 PAD +
 * 4 CRC), so it passes TUF's receiver test (§5.4) with the DDP header's first octets as a "key".
 * Its last four octets are then the CRC32c of the rest (RFC 5044 §6); without CRC, its PAD and DDP
 * header show it.
 */
export function looksLikeMpaFpdu(pdu: Uint8Array): boolean {
  const n = pdu.length;
  if (n < 8) return false;
  if (crc32c(pdu, 0, n - 4) === readWireCrc(pdu[n - 4]!, pdu[n - 3]!, pdu[n - 2]!, pdu[n - 1]!)) return true;
  // Without CRC (C=0 both ways) the CRC field may hold anything (RFC 5044 §7.1.1): an FPDU still has
  // its two PAD octets zero (§4.2) and a DDP segment header at the ULPDU's start (RFC 5041 §4).
  return (
    pdu[n - 6] === 0 &&
    pdu[n - 5] === 0 &&
    plausibleDdpSegmentStart(pdu.subarray(2, Math.min(n - 6, 2 + ULPDU_HEADER_BYTES)), n - 8)
  );
}
