import { describe, expect, it } from 'vitest';
import {
  labelUpperLayer,
  parseRpcRdmaPrivateData,
  parseSmbdLegacyIrdOrd,
} from '../../dissectors/ddp-rdmap/upper-layer.js';
import { hex } from '../helpers/ddp-encoder.js';

const v2block = hex('8010 c010'); // RFC 6581: A, IRD 16, C+D, ORD 16

describe('upper-layer labels', () => {
  it('NFS over RDMA from RFC 8797 private data, after the RFC 6581 block, on any port', () => {
    const pd = new Uint8Array([...v2block, ...hex('f6ab0e18 01 01 00 03')]);
    const l = labelUpperLayer({ serverPort: 12345, requestPd: pd, replyPd: null, enhanced: true });
    expect(l).toMatchObject({ protocol: 'NFS over RDMA', basis: 'private-data' });
    expect(l?.detail?.rpcRdma).toEqual({ version: 1, remoteInvalidate: true, sendSize: 1024, receiveSize: 4096 });
    expect(l?.evidence).toMatch(/magic 0xF6AB0E18.*Request, after the 4-octet RFC 6581 block/);
    // Without the enhanced bit the magic must be at offset 0.
    expect(labelUpperLayer({ serverPort: 12345, requestPd: pd, replyPd: null, enhanced: false })).toBeNull();
    const reply = labelUpperLayer({
      serverPort: null,
      requestPd: null,
      replyPd: hex('f6ab0e18 01 00 1f 1f'),
      enhanced: false,
    });
    expect(reply?.detail).toMatchObject({ from: 'reply', rpcRdma: { sendSize: 32768, remoteInvalidate: false } });
  });

  it('NFS over RDMA by port 20049 alone', () => {
    expect(labelUpperLayer({ serverPort: 20049, requestPd: null, replyPd: null, enhanced: false })).toEqual({
      protocol: 'NFS over RDMA',
      basis: 'port',
      evidence: 'TCP port 20049 (NFS over RDMA)',
    });
  });

  it('SMB Direct: MS-SMBD legacy IRD/ORD big- or little-endian on port 5445', () => {
    const be = labelUpperLayer({
      serverPort: 5445,
      requestPd: hex('00000010 00000008'),
      replyPd: null,
      enhanced: false,
    });
    expect(be).toMatchObject({
      protocol: 'SMB Direct',
      basis: 'private-data',
      detail: { smbdIrdOrd: { ird: 16, ord: 8, byteOrder: 'big-endian' } },
    });
    const le = labelUpperLayer({
      serverPort: 5445,
      requestPd: hex('10000000 08000000'),
      replyPd: null,
      enhanced: false,
    });
    expect(le?.detail?.smbdIrdOrd).toEqual({ ird: 16, ord: 8, byteOrder: 'little-endian' });
    const afterV2 = labelUpperLayer({
      serverPort: 5445,
      requestPd: new Uint8Array([...v2block, ...hex('00000002 00000002')]),
      replyPd: null,
      enhanced: true,
    });
    expect(afterV2?.evidence).toMatch(/IRD 2, ORD 2, big-endian.*after the 4-octet RFC 6581 block/);
    // Port only (no or unrecognisable private data).
    expect(
      labelUpperLayer({ serverPort: 5445, requestPd: hex('00000000 00000000'), replyPd: null, enhanced: false }),
    ).toMatchObject({ protocol: 'SMB Direct', basis: 'port' });
    // The same eight octets on another port prove nothing.
    expect(
      labelUpperLayer({ serverPort: 7000, requestPd: hex('00000010 00000008'), replyPd: null, enhanced: false }),
    ).toBeNull();
  });

  it('iSER (3260) and NVMe/iWARP (4420) by port', () => {
    expect(labelUpperLayer({ serverPort: 3260, requestPd: null, replyPd: null, enhanced: false })?.protocol).toBe(
      'iSER',
    );
    expect(
      labelUpperLayer({ serverPort: 4420, requestPd: new Uint8Array(32), replyPd: null, enhanced: false })?.protocol,
    ).toBe('NVMe/iWARP');
    expect(labelUpperLayer({ serverPort: 80, requestPd: null, replyPd: null, enhanced: false })).toBeNull();
    expect(labelUpperLayer({ serverPort: null, requestPd: null, replyPd: null, enhanced: true })).toBeNull();
  });

  it('parsers reject short or foreign data', () => {
    expect(parseRpcRdmaPrivateData(hex('f6ab0e18 01'))).toBeNull();
    expect(parseRpcRdmaPrivateData(hex('f6ab0e19 01 00 00 00'))).toBeNull();
    expect(parseSmbdLegacyIrdOrd(hex('0000 0001'))).toBeNull();
    expect(parseSmbdLegacyIrdOrd(hex('ffffffff ffffffff'))).toBeNull();
    // Enhanced with a PD shorter than the 4-octet block: nothing to read.
    expect(labelUpperLayer({ serverPort: 1, requestPd: hex('8010'), replyPd: null, enhanced: true })).toBeNull();
  });
});
