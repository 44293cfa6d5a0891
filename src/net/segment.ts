/** A decoded TCP segment, as src/net hands it to src/tcp. */

export interface TcpOptions {
  mss: number | null;
  windowScale: number | null;
  sackPermitted: boolean;
  /** SACK blocks as [left, right) absolute sequence numbers. */
  sack: Array<[number, number]>;
  /** Timestamp option value and echo reply. */
  tsVal: number | null;
  tsEcr: number | null;
}

export const TCP_FIN = 0x01;
export const TCP_SYN = 0x02;
export const TCP_RST = 0x04;
export const TCP_PSH = 0x08;
export const TCP_ACK = 0x10;
export const TCP_URG = 0x20;
export const TCP_ECE = 0x40;
export const TCP_CWR = 0x80;

export interface TcpSegment {
  frame: number;
  tsSec: number;
  tsNsec: number;
  ipVersion: 4 | 6;
  /** Address text: dotted quad, or RFC 5952 canonical IPv6 (without brackets). */
  src: string;
  dst: string;
  srcPort: number;
  dstPort: number;
  seq: number;
  ack: number;
  /** TCP flag bits (TCP_FIN ... TCP_CWR, plus 0x100 NS). */
  flags: number;
  window: number;
  urgent: number;
  /** Decoded options, or null when the header has none. */
  options: TcpOptions | null;
  /** Captured payload (view valid only during the call that hands it out). */
  payload: Uint8Array;
  /** Payload octets the IP/TCP headers say were sent but the capture does not hold (snaplen). */
  missing: number;
}

/** The port of an "ADDR:PORT" endpoint (IPv6 in brackets). */
export function portOf(ep: string): number {
  return Number(ep.slice(ep.lastIndexOf(':') + 1));
}

/** "ADDR:PORT", IPv6 in brackets (report-schema conventions). */
export function endpoint(addr: string, port: number): string {
  return addr.includes(':') ? `[${addr}]:${port}` : `${addr}:${port}`;
}

/** A segment with every field empty: the one object a decoder (or a batch reader) fills again and again. */
export function blankSegment(): TcpSegment {
  return {
    frame: 0,
    tsSec: 0,
    tsNsec: 0,
    ipVersion: 4,
    src: '',
    dst: '',
    srcPort: 0,
    dstPort: 0,
    seq: 0,
    ack: 0,
    flags: 0,
    window: 0,
    urgent: 0,
    options: null,
    payload: new Uint8Array(0),
    missing: 0,
  };
}
