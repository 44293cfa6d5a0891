/**
 * pcapng timestamps: a 64-bit count of if_tsresol units, plus if_tsoffset seconds, turned into
 * whole seconds and nanoseconds without floating-point error.
 *
 * A 64-bit count does not fit a double (nanosecond counts are ~2^61 today), and BigInt per packet
 * is slow, so the two common families (10^-v with v <= 9, 2^-k with k <= 32) use exact integer
 * arithmetic on 16-bit digits; anything else falls back to BigInt.
 */

/** Target object for a converted timestamp (a PacketRecord). */
export interface TsTarget {
  tsSec: number;
  tsNsec: number;
}

const TWO32 = 4294967296;
/** 1e9 = 2^9 * 1953125: lets rem * 1e9 / 2^k stay below 2^53 for rem < 2^32. */
const NS_ODD = 1953125;

const enum Mode {
  Decimal,
  Binary,
  Big,
}

export class TsConverter {
  private readonly mode: Mode;
  /** Units per second (Decimal mode). */
  private readonly unit: number;
  /** Nanoseconds per unit (Decimal mode). */
  private readonly nsPerUnit: number;
  /** Binary exponent k of 2^-k (Binary mode). */
  private readonly k: number;
  private readonly bigUnit: bigint;

  /**
   * @param tsresol if_tsresol option byte (default 6: microseconds). High bit set: 2^-(v & 0x7f).
   * @param offsetSec if_tsoffset: seconds added to every timestamp.
   */
  constructor(
    readonly tsresol: number = 6,
    private readonly offsetSec: number = 0,
  ) {
    const v = tsresol & 0x7f;
    this.k = v;
    this.unit = 0;
    this.nsPerUnit = 0;
    this.bigUnit = 0n;
    if ((tsresol & 0x80) === 0) {
      if (v <= 9) {
        this.mode = Mode.Decimal;
        this.unit = 10 ** v;
        this.nsPerUnit = 10 ** (9 - v);
      } else {
        this.mode = Mode.Big;
        this.bigUnit = 10n ** BigInt(v);
      }
    } else if (v <= 32) {
      this.mode = Mode.Binary;
    } else {
      this.mode = Mode.Big;
      this.bigUnit = 1n << BigInt(v);
    }
  }

  /** Converts the count hi * 2^32 + lo (both unsigned 32-bit) into out.tsSec / out.tsNsec. */
  apply(hi: number, lo: number, out: TsTarget): void {
    let sec: number;
    let ns: number;
    if (this.mode === Mode.Decimal) {
      const u = this.unit;
      let rem: number;
      if (hi < 0x200000) {
        // The count is below 2^53: exact as a double; the division may round up by one unit.
        const t = hi * TWO32 + lo;
        sec = Math.floor(t / u);
        rem = t - sec * u;
        if (rem < 0) {
          sec--;
          rem += u;
        }
      } else {
        // Long division in 16-bit digits: every intermediate stays below 2^53 since u <= 1e9.
        const qh = Math.floor(hi / u);
        const x = (hi - qh * u) * 65536 + (lo >>> 16);
        const q1 = Math.floor(x / u);
        const y = (x - q1 * u) * 65536 + (lo & 0xffff);
        const q0 = Math.floor(y / u);
        rem = y - q0 * u;
        sec = qh * TWO32 + q1 * 65536 + q0;
      }
      ns = rem * this.nsPerUnit;
    } else if (this.mode === Mode.Binary) {
      const k = this.k;
      let rem: number;
      if (k === 32) {
        sec = hi;
        rem = lo;
      } else {
        sec = hi * 2 ** (32 - k) + Math.floor(lo / 2 ** k);
        rem = lo % 2 ** k;
      }
      ns = k > 9 ? Math.floor((rem * NS_ODD) / 2 ** (k - 9)) : rem * NS_ODD * 2 ** (9 - k);
    } else {
      const t = (BigInt(hi) << 32n) | BigInt(lo);
      const u = this.bigUnit;
      sec = Number(t / u);
      ns = Number(((t % u) * 1_000_000_000n) / u);
    }
    out.tsSec = sec + this.offsetSec;
    out.tsNsec = ns;
  }
}
