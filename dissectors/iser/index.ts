/**
 * iSER (RFC 7145) with iSCSI (RFC 7143) and SCSI above it, as an upper layer of DDP/RDMAP
 * (ulp-contract.ts). Wireshark decodes iSER on InfiniBand only; this is its iWARP counterpart.
 */
import { initiatorOf, type SendMessage, type UlpConnection, type UpperLayerSpec } from '../ddp-rdmap/ulp-contract.js';
import { PORT_ISER } from '../ddp-rdmap/upper-layer.js';
import { BHS_LEN, decodeBhs, decodeHello, decodeIserHeader, ISER_HDR_LEN, ISER_VERSION } from './decode.js';
import { IserDissector } from './dissector.js';
import { ISER_FIELDS } from './fields.js';
import { iserCmOf, streamingLoginAsksRdma } from './login.js';
import { ISER_OP, OP } from './names.js';
import { ISER_RULES } from './rules.js';

/**
 * The evidence before any Send: a streaming-mode login (RFC 5046 §5.1) that asked for
 * RDMAExtensions=Yes, or the 4-octet iSER CM REQ private data (RFC 7145 §9.1) on a connection to
 * the iSCSI port. Four octets alone are too common a shape to decide on.
 */
export function hasIserEvidence(c: UlpConnection): boolean {
  if (streamingLoginAsksRdma(c, initiatorOf(c))) return true;
  const cm = iserCmOf(c.requestPrivateData);
  return cm !== null && !cm.reservedSet && c.serverPort === PORT_ISER;
}

/**
 * As Wireshark's dissect_packet checks (valid iSER opcode and flags, Hello version 10 in both
 * nibbles), and more strictly: the initiator's first Send is a Hello, or an iSCSI control-type PDU
 * whose BHS is a Login Request (RFC 7145 §5.1, iSER-assisted login).
 */
export function isIserFirstMessage(m: SendMessage, c: UlpConnection): boolean {
  if (m.dir !== initiatorOf(c) || m.payload.length === 0) return false;
  const op = m.payload[0]! >> 4;
  if (op === ISER_OP.hello) {
    const h = decodeHello(m.payload);
    return h !== null && (m.payload[0]! & 0x0f) === 0 && h.maxVer === ISER_VERSION && h.minVer === ISER_VERSION;
  }
  if (op !== ISER_OP.control) return false;
  const ih = decodeIserHeader(m.payload);
  if (!ih || (ih.flags & 0x03) !== 0 || ih.reserved !== 0) return false;
  const h = decodeBhs(m.payload, ISER_HDR_LEN);
  return h !== null && h.opcode === OP.loginRequest && m.length >= ISER_HDR_LEN + BHS_LEN + h.ahsLength + h.dataLength;
}

export const ISER: UpperLayerSpec = {
  id: 'iser',
  name: 'iSER',
  ports: [PORT_ISER],
  privateData: hasIserEvidence,
  firstMessage: isIserFirstMessage,
  fields: ISER_FIELDS,
  rules: ISER_RULES,
  create: (env) => new IserDissector(env),
};

export { IserDissector, MAX_TASKS } from './dissector.js';
export { ISER_FIELDS, F as ISER_FIELD, I as ISCSI_FIELD, S as SCSI_FIELD } from './fields.js';
export { ISER_RULES, R as ISER_RULE } from './rules.js';
