/**
 * The SMB Direct upper-layer dissector of one connection: every RDMAP message in capture order.
 * Sends go through the MS-SMBD transport state (negotiation, credits, keepalives, reassembly); each
 * complete upper-layer message is decoded as SMB2 and paired with its request; RDMA Writes and
 * Read Requests only feed request timing (the RDMAP side checks them against the ledger).
 */
import {
  initiatorOf,
  LazyUlpRecord,
  type Dir,
  type RdmapMessage,
  type SendMessage,
  type UlpEnvironment,
  type UlpRecord,
  type UpperLayerDissector,
} from '../ddp-rdmap/ulp-contract.js';
import { applyIrdOrd } from './private-data.js';
import { R } from './rules.js';
import { Smb2State, type CommandView } from './smb2-state.js';
import { decodeSmb2 } from './smb2.js';
import { SmbdTransport, type At } from './transport.js';
import { commandInfo, reassembledSuffix, smb2Node, smbDirectTree, transportInfo } from './tree.js';

export class SmbDirectDissector implements UpperLayerDissector {
  private readonly transport: SmbdTransport;
  private readonly smb2: Smb2State;
  private readonly initiator: Dir;
  /** What could not be checked for want of captured octets: category -> occurrences. */
  private readonly skipped = new Map<string, number>();
  private firstSkipped: At | null = null;
  /** The Negotiate Request was seen: the connection is followed from its start. */
  private followed = false;
  /** A Send of the client was not captured whole: requests may be unseen. */
  private gaps = false;
  private encryptedTold = false;
  private notSmb2Told = false;

  constructor(private readonly env: UlpEnvironment) {
    const c = env.connection;
    this.initiator = initiatorOf(c);
    const report = (rule: string, at: At, message: string): void => this.report(rule, at, message);
    const skip = (what: string, at: At): void => this.skip(what, at);
    this.transport = new SmbdTransport(this.initiator, c.initiatorDir !== null, report, skip);
    this.smb2 = new Smb2State(c.flow, env.sink, env.ledger, env.timing, skip);
    applyIrdOrd(c, this.initiator, env.sink, env.ledger);
  }

  message(m: RdmapMessage): UlpRecord | null {
    if (m.kind === 'send') return this.send(m);
    if (m.kind === 'write' || m.kind === 'read-request' || m.kind === 'read-response') this.smb2.access(m);
    return null;
  }

  private send(m: SendMessage): UlpRecord {
    if (m.invalidateStag !== null) this.smb2.noteInvalidate(m.invalidateStag);
    if (!m.intact && m.dir === this.initiator) this.loseTrack();
    const out = this.transport.send(m);
    if (!this.followed && this.transport.request) {
      this.followed = true;
      // MS-SMBD 3.1.5.2: nothing precedes the Negotiate Request, so every buffer is advertised after it.
      if (!this.gaps) this.env.ledger.strict = true;
    }
    let info = transportInfo(out, m.length);
    const views: CommandView[] = [];
    let base: number | null = null;
    const del = out.delivered;
    if (del) {
      const d = decodeSmb2(del.bytes, del.length);
      if (d.truncated) this.skip('SMB2 commands past the captured octets', m);
      if (d.kind === 'smb2') {
        for (const v of this.smb2.message(d, del, m, this.followed && !this.gaps)) views.push(v);
        // Offsets only when the whole SMB2 message sits in this Send.
        base = del.fragments === 1 && out.data ? out.data.dataOffset : null;
        if (views.length > 0) info = views.map(commandInfo).join('; ') + reassembledSuffix(out);
      } else if (d.kind === 'transform' || d.kind === 'compressed') {
        info = d.kind === 'transform' ? 'SMB2 Transform (encrypted)' : 'SMB2 Compressed';
        if (!this.encryptedTold) {
          this.encryptedTold = true;
          this.report(R.encrypted, m, `${info}: SMB2 messages of this connection are not decoded from here on`);
        }
        this.loseTrack();
      } else if (d.kind === 'other' && !this.notSmb2Told) {
        this.notSmb2Told = true;
        this.report(R.notSmb2, m, `upper-layer message of ${del.length} octets does not start with an SMB2 header`);
      }
    }
    const length = m.payload.length;
    return new LazyUlpRecord('smb_direct', info, () =>
      smbDirectTree(
        out,
        length,
        views.map((v) => smb2Node(v, base)),
      ),
    );
  }

  /**
   * The capture lost octets of `dir`: a Data Transfer of that sender may be missing, so the credit
   * counts and its fragment train are unknown; a lost request of the client also makes responses
   * without a request and unknown STags no error.
   */
  captureLoss(dir: Dir): void {
    this.transport.lose(dir);
    if (dir === this.initiator) this.loseTrack();
  }

  /** Requests or their Buffer Descriptors may be unseen: stop treating unknown MessageIds and STags as errors. */
  private loseTrack(): void {
    this.gaps = true;
    this.env.ledger.strict = false;
  }

  private report(rule: string, at: At, message: string): void {
    const c = this.env.connection;
    this.env.sink.report(rule, { flow: c.flow, from: at.from, frames: at.frames, seq: at.seq, message });
  }

  private skip(what: string, at: At): void {
    this.skipped.set(what, (this.skipped.get(what) ?? 0) + 1);
    this.firstSkipped ??= { seq: at.seq, frames: [...at.frames], from: at.from };
  }

  end(lastTime: number): void {
    for (const k of this.transport.pendingKeepalives()) {
      const age = Number.isFinite(lastTime - k.time)
        ? `; ${(lastTime - k.time).toFixed(6)} s passed before the end`
        : '';
      this.report(R.keepalive, k.at, `keepalive (SMB_DIRECT_RESPONSE_REQUESTED) never answered by the peer${age}`);
    }
    this.smb2.end(lastTime);
    if (this.firstSkipped) {
      const list = [...this.skipped].map(([what, n]) => `${what} (${n}×)`).join('; ');
      this.report(R.notCaptured, this.firstSkipped, `octets not captured, not checked: ${list}`);
    }
  }
}
