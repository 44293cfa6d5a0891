/**
 * tshark as the oracle for our iSCSI decode. Wireshark decodes iSER on InfiniBand only, but it
 * decodes iSCSI over TCP: the iSCSI PDUs of the iser-clean scenario (login, INQUIRY, READ and
 * WRITE of 10 and 16 octets, Data-Out, NOP, Logout) are carried once in iSER Sends over MPA (the
 * scenario's capture, read by us) and once over plain TCP port 3260 (the twin, read by tshark), and
 * the iscsi.* and scsi.* fields the two show must agree PDU by PDU, in order. Skips visibly without
 * tshark.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { generate } from '../../src/generate/generate.js';
import { iserTasks } from '../../src/generate/iser-scenarios.js';
import { IserSession } from '../../src/generate/iser-session.js';
import { buildScenario } from '../../src/generate/scenario.js';
import { cli } from '../cli/helpers.js';
import { HAVE_TSHARK } from '../helpers/tools.js';

const run = promisify(execFile);
const hasTshark = HAVE_TSHARK;

/** Fields every PDU is compared on (Wireshark's names, ours too). */
const FIELDS = [
  'iscsi.opcode',
  'iscsi.initiatortasktag',
  'iscsi.datasegmentlength',
  'iscsi.scsicommand.expecteddatatransferlength',
  'iscsi.cmdsn',
  'iscsi.expstatsn',
  'iscsi.statsn',
  'iscsi.expcmdsn',
  'iscsi.maxcmdsn',
  'iscsi.scsiresponse.status',
  'iscsi.scsiresponse.residualcount',
  'iscsi.login.status',
  'iscsi.tsih',
  'iscsi.bufferOffset',
  'scsi_sbc.rdwr10.lba',
  'scsi_sbc.rdwr10.xferlen',
] as const;
/** Compared on SCSI Commands only: Wireshark repeats the command's opcode on its response and data. */
const COMMAND_ONLY = ['scsi_sbc.opcode'] as const;

const norm = (v: string): string => {
  const t = v.trim().split(',')[0]!;
  if (/^0x[0-9a-f]+$/i.test(t) || /^\d+$/.test(t)) return String(BigInt(t));
  return t;
};

function rows(stdout: string, fields: readonly string[]): Array<Record<string, string>> {
  return stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const cols = l.split('\t');
      const r: Record<string, string> = {};
      fields.forEach((f, i) => {
        const v = cols[i + 1] ?? '';
        if (v !== '') r[f] = norm(v);
      });
      return r;
    });
}

describe('tshark oracle: iSCSI over TCP twin of the iSER capture', () => {
  const name = hasTshark
    ? 'every iSCSI PDU shows the same iscsi.* and scsi.* fields in tshark and in ours'
    : 'tshark is not installed: the iSCSI twin comparison did not run';
  it.skipIf(!hasTshark)(name, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'iser-twin-'));
    // The same session the scenario builds: its iSER Sends' iSCSI PDUs, over plain TCP.
    const s = new IserSession();
    s.hello();
    s.assistedLogin();
    iserTasks(s);
    const pdus = s.events.flatMap((e) =>
      e.op === 'send' && e.payload[0]! >> 4 === 1
        ? [{ dir: e.dir, bytes: e.payload.subarray(28), cut: [e.payload.length - 28], delayUs: 50 }]
        : [],
    );
    const twin = buildScenario(pdus, {
      client: { addr: '10.0.0.1', port: 50123 },
      server: { addr: '10.0.0.2', port: 3260 },
      mss: 9000,
    });
    writeFileSync(join(dir, 'twin.pcap'), twin.pcap);
    writeFileSync(join(dir, 'iser.pcap'), generate('iser-clean', {}, 1, 'pcap').capture);
    const all = [...FIELDS, ...COMMAND_ONLY];
    const args = [
      '-r',
      join(dir, 'twin.pcap'),
      '-d',
      'tcp.port==3260,iscsi',
      '-Y',
      'iscsi',
      '-T',
      'fields',
      '-e',
      'frame.number',
    ];
    for (const f of all) args.push('-e', f);
    const theirs = rows((await run('tshark', args, { maxBuffer: 16 << 20 })).stdout, all);
    const ourArgs = [
      '-T',
      'fields',
      '-e',
      'frame.number',
      ...all.flatMap((f) => ['-e', f]),
      '-Y',
      'iscsi.opcode',
      'iser.pcap',
    ];
    const r = cli(ourArgs, { cwd: dir });
    expect(r.code).toBe(0);
    const ours = rows(r.stdout, all);
    expect(theirs.length).toBe(pdus.length);
    expect(ours.length).toBe(pdus.length);
    for (let i = 0; i < pdus.length; i++) {
      const t = theirs[i]!;
      const o = ours[i]!;
      const pick = (x: Record<string, string>, cmd: boolean) =>
        Object.fromEntries(Object.entries(x).filter(([k]) => cmd || !(COMMAND_ONLY as readonly string[]).includes(k)));
      const isCmd = t['iscsi.opcode'] === '1';
      expect({ pdu: i, ...pick(o, isCmd) }).toEqual({ pdu: i, ...pick(t, isCmd) });
    }
  });
});
