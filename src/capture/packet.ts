/**
 * One captured frame as a capture reader hands it out.
 *
 * Readers reuse one PacketRecord object and hand out `data` as a zero-copy view into their read
 * buffer: both are valid only during the callback. A consumer that keeps bytes copies them.
 */
export interface PacketRecord {
  /** 1-based, counted over every record in the capture, as Wireshark counts. */
  frame: number;
  /** Timestamp: whole seconds since the epoch and the nanoseconds within that second. */
  tsSec: number;
  tsNsec: number;
  /** LINKTYPE_* value of the interface the frame was captured on. */
  linkType: number;
  /** Captured bytes (view, valid only during the callback). */
  data: Uint8Array;
  /** Original length on the wire; greater than data.length when the snaplen cut the frame. */
  origLen: number;
  /** Byte offset of this record (its record/block header) in the capture file or stream. */
  fileOffset: number;
  /** Interface index (pcapng); 0 for classic pcap. */
  interfaceId: number;
}

export type CaptureFormat = 'pcap' | 'pcapng' | 'live';

/** Why reading stopped early: one clear line with file, byte offset and frame number. */
export interface CaptureReadError {
  file: string;
  offset: number;
  /** Frame number the bad record would have had. */
  frame: number;
  message: string;
}

export interface CaptureSummary {
  path: string;
  format: CaptureFormat | null;
  packets: number;
  bytes: number;
  linkTypes: number[];
  error: CaptureReadError | null;
  /** Live capture only: how timestamps were taken ('arrival' when the backend gives none). */
  timestamps?: 'capture' | 'arrival';
  /** Live capture only: the backend that captured (cap, tcpdump, dumpcap). */
  backend?: string;
  /** Live capture only: packets dropped by the kernel or libpcap, or null when the backend cannot tell. */
  dropped?: number | null;
  /** What the reader put up with, one line each (octets after a gzip stream's end). */
  warnings?: string[];
}

/** "file: offset N, frame F: message", the one line shown for an unreadable capture. */
export function formatReadError(e: CaptureReadError): string {
  return `${e.file}: offset ${e.offset}, frame ${e.frame}: ${e.message}`;
}
