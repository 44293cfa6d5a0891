/**
 * MS-SMBD (SMB2 RDMA Transport) message layouts: pure decoders over the untagged Send payload.
 * All fields are little-endian (MS-SMBD 2.2). The decoders never throw: a buffer shorter than the
 * fixed part yields null, and the caller decides what a short message means (it depends on the
 * connection state, MS-SMBD 3.1.5.5).
 */

/** MS-SMBD 1.7: the only protocol version defined. */
export const SMBD_VERSION_1 = 0x0100;
/** MS-SMBD 2.2.1: the Negotiate Request is 20 octets. */
export const NEGOTIATE_REQUEST_LEN = 20;
/** MS-SMBD 2.2.2: the Negotiate Response is 32 octets. */
export const NEGOTIATE_RESPONSE_LEN = 32;
/** MS-SMBD 2.2.3, 3.1.5.8: a Data Transfer message is at least 20 octets (Linux SMBDIRECT_DATA_MIN_HDR_SIZE). */
export const DATA_TRANSFER_MIN_LEN = 20;
/** MS-SMBD 3.1.5.4: DataOffset SHOULD be 24 (Linux SMBDIRECT_DATA_OFFSET). */
export const DATA_TRANSFER_DATA_OFFSET = 24;
/** MS-SMBD 2.2.3: SMB_DIRECT_RESPONSE_REQUESTED, the keepalive flag; no other flag is defined. */
export const FLAG_RESPONSE_REQUESTED = 0x0001;
/** MS-SMBD 3.1.5.6 / 3.1.5.7: floors of the negotiated sizes. */
export const MIN_MAX_RECEIVE_SIZE = 128;
export const MIN_MAX_FRAGMENTED_SIZE = 131072;
/** MS-ERREF: STATUS_NOT_SUPPORTED, the Negotiate Response status when the version range lacks 0x0100 (3.1.5.6). */
export const STATUS_NOT_SUPPORTED = 0xc00000bb;

/** MS-SMBD 2.2.1. */
export interface NegotiateRequest {
  readonly minVersion: number;
  readonly maxVersion: number;
  readonly reserved: number;
  readonly creditsRequested: number;
  readonly preferredSendSize: number;
  readonly maxReceiveSize: number;
  readonly maxFragmentedSize: number;
}

/** MS-SMBD 2.2.2. */
export interface NegotiateResponse {
  readonly minVersion: number;
  readonly maxVersion: number;
  readonly negotiatedVersion: number;
  readonly reserved: number;
  readonly creditsRequested: number;
  readonly creditsGranted: number;
  readonly status: number;
  readonly maxReadWriteSize: number;
  readonly preferredSendSize: number;
  readonly maxReceiveSize: number;
  readonly maxFragmentedSize: number;
}

/** MS-SMBD 2.2.3. `padding` is null when the message stops at the 20-octet header. */
export interface DataTransfer {
  readonly creditsRequested: number;
  readonly creditsGranted: number;
  readonly flags: number;
  readonly reserved: number;
  readonly remainingDataLength: number;
  readonly dataOffset: number;
  readonly dataLength: number;
  readonly padding: number | null;
}

/** MS-SMBD 2.2.3.1: SMB_DIRECT_BUFFER_DESCRIPTOR_V1, 16 octets. */
export const BUFFER_DESCRIPTOR_V1_LEN = 16;

const view = (b: Uint8Array): DataView => new DataView(b.buffer, b.byteOffset, b.byteLength);

export function decodeNegotiateRequest(b: Uint8Array): NegotiateRequest | null {
  if (b.length < NEGOTIATE_REQUEST_LEN) return null;
  const v = view(b);
  return {
    minVersion: v.getUint16(0, true),
    maxVersion: v.getUint16(2, true),
    reserved: v.getUint16(4, true),
    creditsRequested: v.getUint16(6, true),
    preferredSendSize: v.getUint32(8, true),
    maxReceiveSize: v.getUint32(12, true),
    maxFragmentedSize: v.getUint32(16, true),
  };
}

export function decodeNegotiateResponse(b: Uint8Array): NegotiateResponse | null {
  if (b.length < NEGOTIATE_RESPONSE_LEN) return null;
  const v = view(b);
  return {
    minVersion: v.getUint16(0, true),
    maxVersion: v.getUint16(2, true),
    negotiatedVersion: v.getUint16(4, true),
    reserved: v.getUint16(6, true),
    creditsRequested: v.getUint16(8, true),
    creditsGranted: v.getUint16(10, true),
    status: v.getUint32(12, true),
    maxReadWriteSize: v.getUint32(16, true),
    preferredSendSize: v.getUint32(20, true),
    maxReceiveSize: v.getUint32(24, true),
    maxFragmentedSize: v.getUint32(28, true),
  };
}

export function decodeDataTransfer(b: Uint8Array): DataTransfer | null {
  if (b.length < DATA_TRANSFER_MIN_LEN) return null;
  const v = view(b);
  return {
    creditsRequested: v.getUint16(0, true),
    creditsGranted: v.getUint16(2, true),
    flags: v.getUint16(4, true),
    reserved: v.getUint16(6, true),
    remainingDataLength: v.getUint32(8, true),
    dataOffset: v.getUint32(12, true),
    dataLength: v.getUint32(16, true),
    padding: b.length >= 24 ? v.getUint32(20, true) : null,
  };
}

/** MS-SMBD 3.1.5.6: the range MinVersion..MaxVersion includes 0x0100. */
export function versionRangeOk(min: number, max: number): boolean {
  return min <= SMBD_VERSION_1 && SMBD_VERSION_1 <= max;
}

/**
 * True when `b` (of a Send `length` octets long) is a Negotiate Request the listening side accepts
 * (MS-SMBD 3.1.5.6): at least 20 octets, a version range with 0x0100, CreditsRequested > 0,
 * MaxReceiveSize >= 128, MaxFragmentedSize >= 131072. Wireshark's heuristic (is_smb_direct)
 * insists on exactly 20 octets and min = max = 0x0100; the specification does not.
 */
export function isValidNegotiateRequest(b: Uint8Array, length: number): boolean {
  if (length < NEGOTIATE_REQUEST_LEN) return false;
  const r = decodeNegotiateRequest(b);
  return (
    r !== null &&
    versionRangeOk(r.minVersion, r.maxVersion) &&
    r.creditsRequested > 0 &&
    r.maxReceiveSize >= MIN_MAX_RECEIVE_SIZE &&
    r.maxFragmentedSize >= MIN_MAX_FRAGMENTED_SIZE
  );
}

/**
 * The first-Send heuristic (no private data, port or option said SMB Direct): a Negotiate Request the
 * listener accepts whose version range starts at 0x0100, the only version MS-SMBD defines (2.2.1).
 * A range starting below 0x0100 names no version of the protocol, and random octets pass the
 * receiver's checks alone about once in 256 Sends.
 */
export function looksLikeNegotiateRequest(b: Uint8Array, length: number): boolean {
  return isValidNegotiateRequest(b, length) && decodeNegotiateRequest(b)!.minVersion === SMBD_VERSION_1;
}

/** The data payload of a Data Transfer within `b`, cut to the octets present. */
export function dataPayload(b: Uint8Array, d: DataTransfer): Uint8Array {
  if (d.dataLength === 0 || d.dataOffset >= b.length) return b.subarray(0, 0);
  return b.subarray(d.dataOffset, Math.min(b.length, d.dataOffset + d.dataLength));
}
