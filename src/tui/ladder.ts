/**
 * The startup ladder: Wireshark's Flow Graph as text for one flow. TCP handshake, MPA Request
 * and Reply, the first FPDU each way, the RTR and any Terminate, each an arrow between the two
 * endpoints, with the rule a startup step broke written on its arrow (RFC 5044 §7.1.2's rules are
 * about ordering: what came before what).
 */
import type { FrameStore } from '../report/frame-store.js';
import { PacketDecoder } from '../net/decoder.js';
import { endpoint } from '../net/segment.js';
import type { FindingInput, FindingSink } from '../vocabulary/findings.js';
import { isDdpSegmentRecord } from '../../dissectors/ddp-rdmap/upper-factory.js';
import { isFpdu } from '../report/events.js';
import type { CaptureModel, FlowRow } from './capture-model.js';
import { KIND_FINDING, KIND_FPDU, KIND_REPLY, KIND_REQUEST, V_ERROR, V_WARNING } from './pdu-index.js';
import type { Line, StyleName } from './lines.js';

const quiet: FindingSink = { report: (_id: string, _f: FindingInput) => {} };
const TCP_FIN = 0x01;
const TCP_SYN = 0x02;
const TCP_RST = 0x04;
const TCP_ACK = 0x10;
/** Frames looked at for the handshake before the flow's first MPA record. */
const HANDSHAKE_SCAN = 256;
/** Items of a flow looked at for the RTR and a Terminate. */
const ITEM_SCAN = 4096;

interface Step {
  frames: string;
  dir: 0 | 1;
  /** What the arrow is ("MPA Request"); the broken rules follow it, then `detail`. */
  text: string;
  detail?: string;
  broke: string[];
  sev: StyleName | null;
}

const RDMAP_TERMINATE = 0x7;

function handshake(store: FrameStore, fl: FlowRow, until: number): Step[] {
  const out: Step[] = [];
  const dec = new PacketDecoder(quiet);
  const last = Math.min(until, fl.firstFrame + HANDSHAKE_SCAN);
  for (let fr = Math.max(1, fl.firstFrame); fr < last && out.length < 3; fr++) {
    const p = store.get(fr);
    if (!p) continue;
    dec.decode(p, (s) => {
      const from = endpoint(s.src, s.srcPort);
      const to = endpoint(s.dst, s.dstPort);
      const dir = from === fl.client && to === fl.server ? 0 : from === fl.server && to === fl.client ? 1 : -1;
      if (dir < 0) return;
      const f = s.flags;
      let text: string | null = null;
      if (f & TCP_SYN) text = f & TCP_ACK ? 'SYN, ACK' : 'SYN';
      else if (f & TCP_RST) text = 'RST';
      else if (f & TCP_FIN) text = 'FIN';
      else if (out.length === 2 && s.payload.length === 0 && f & TCP_ACK) text = 'ACK';
      if (text) out.push({ frames: String(fr), dir: dir as 0 | 1, text, broke: [], sev: null });
    });
  }
  return out;
}

function framesText(fr: readonly number[]): string {
  return fr.length > 1 ? `${fr[0]}-${fr[fr.length - 1]}` : String(fr[0] ?? '');
}

/** The ladder of flow `fl`, `width` columns wide. */
export function ladderLines(model: CaptureModel, fl: FlowRow, width: number): Line[] {
  const ix = model.index;
  const steps: Step[] = [];
  const items = fl.items;
  const firstFrame = items.length ? ix.firstFrame(items.get(0)) : fl.firstFrame + HANDSHAKE_SCAN;
  steps.push(...handshake(model.source.frames, fl, firstFrame));
  const firstFpdu: [boolean, boolean] = [false, false];
  let rtr = false;
  let terminate = false;
  const n = Math.min(items.length, ITEM_SCAN);
  for (let k = 0; k < n; k++) {
    const i = items.get(k);
    const kind = ix.kind[i]!;
    const dir = ix.dir[i]! as 0 | 1;
    const fs = model.findingsOf(i);
    const broke = fs.filter((f) => f.severity !== 'info').map((f) => f.rule);
    const sev: StyleName | null = ix.verdict[i]! & V_ERROR ? 'error' : ix.verdict[i]! & V_WARNING ? 'warning' : null;
    const frames = framesText(ix.framesOf(i));
    if (kind === KIND_REQUEST || kind === KIND_REPLY) {
      steps.push({
        frames,
        dir,
        text: `MPA ${kind === KIND_REQUEST ? 'Request' : 'Reply'}`,
        detail: model.infoOf(i),
        broke,
        sev,
      });
      continue;
    }
    if (kind === KIND_FINDING) {
      // Startup-phase findings that belong to no record (e.g. a close before the Reply).
      if (!firstFpdu[0] && !firstFpdu[1] && fs.some((f) => f.rule.startsWith('mpa.')))
        steps.push({ frames, dir, text: fs[0]!.rule, broke, sev });
      continue;
    }
    if (kind !== KIND_FPDU) continue;
    const first = !firstFpdu[dir];
    let isRtr = false;
    let isTerm = false;
    if (first || !rtr || !terminate) {
      const r = model.record(i);
      if (r && isFpdu(r) && isDdpSegmentRecord(r.upper)) {
        isRtr = r.upper.rtr !== null;
        const p = r.upper.pdu;
        isTerm = p.kind !== 'truncated' && p.rdmap.opcode === RDMAP_TERMINATE;
      }
    }
    if (first || (isRtr && !rtr) || (isTerm && !terminate)) {
      const info = model.infoOf(i);
      const tag = isRtr ? 'RTR' : isTerm ? 'Terminate' : 'first FPDU';
      steps.push({ frames, dir, text: tag, detail: isTerm ? info.replace(/^Terminate /, '') : info, broke, sev });
    }
    if (first) firstFpdu[dir] = true;
    if (isRtr) rtr = true;
    if (isTerm) terminate = true;
  }
  const out: Line[] = [];
  const colW = 8;
  const arrowW = Math.max(16, width - colW);
  const left = fl.client;
  const right = fl.server;
  out.push([
    { t: ' '.repeat(colW) + left.padEnd(Math.max(left.length + 1, arrowW - right.length)) + right, s: 'bold' },
  ]);
  for (const s of steps) {
    // The broken rule right after what the arrow is, so a narrow pane cuts the detail, not the rule.
    const label = ` ${s.text}${s.broke.length ? ` ✗ ${s.broke.join(', ')}` : ''}${s.detail ? ` ${s.detail}` : ''} `;
    const body = arrowW - 3;
    const lab = label.length > body - 4 ? label.slice(0, body - 5) + '… ' : label;
    const dashes = Math.max(2, body - lab.length);
    const arrow = s.dir === 0 ? `|--${lab}${'-'.repeat(dashes - 2)}>|` : `|<${'-'.repeat(dashes - 2)}${lab}--|`;
    const line: Line = [{ t: s.frames.padStart(colW - 1) + ' ', s: 'dim' }];
    line.push(s.sev ? { t: arrow, s: s.sev } : { t: arrow });
    out.push(line);
  }
  if (steps.length === 0) out.push([{ t: 'no startup steps seen for this flow', s: 'dim' }]);
  return out;
}
