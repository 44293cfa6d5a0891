/**
 * Screens over the panes: the keys help, and the notices that say why there is nothing to browse
 * (the capture failed or was unreadable, is empty, or carries no MPA).
 */
import type { CaptureModel } from './capture-model.js';
import { KEYS } from './keys.js';
import type { Line } from './lines.js';
import type { Overlay } from './view-types.js';

export function helpOverlay(): Overlay {
  const w = Math.max(...KEYS.map((k) => k.keys.length));
  return {
    title: 'Keys (any key closes)',
    lines: KEYS.map((k) => [{ t: k.keys.padEnd(w + 2), s: 'bold' }, { t: k.does }] as Line),
    tone: 'normal',
  };
}

/** The notice for the model's state, if any; `dismissed` (any key but q) hides the dismissable ones. */
export function noticeOverlay(m: CaptureModel, dismissed: boolean): Overlay | null {
  const name = m.source.label;
  if (m.state === 'failed' && m.source.live) {
    return {
      title: `Capture on ${m.source.live.iface} failed`,
      lines: [
        [{ t: m.error ?? `${name}: the capture ended`, s: 'error' }],
        [],
        [{ t: `The ${m.source.live.backend} capture ended before handing out any packet.` }],
        [{ t: 'q quits (exit status 2).', s: 'dim' }],
      ],
      tone: 'error',
    };
  }
  if (m.state === 'failed') {
    return {
      title: 'Cannot read the capture',
      lines: [
        [{ t: m.error ?? `${name}: unreadable`, s: 'error' }],
        [],
        [{ t: 'Check the path and that it is a pcap or pcapng file (tcpdump -w, dumpcap, Wireshark).' }],
        [{ t: 'q quits.', s: 'dim' }],
      ],
      tone: 'error',
    };
  }
  if (m.state !== 'done' || dismissed) return null;
  if (m.packets === 0) {
    return {
      title: 'Empty capture',
      lines: [
        [{ t: `${name} holds no packets.` }],
        [],
        [{ t: 'Capture again with a filter on the RDMA port, e.g. tcpdump -i eth0 -w cap.pcap port 4420.' }],
        [{ t: 'q quits; any other key shows the (empty) panes.', s: 'dim' }],
      ],
      tone: 'normal',
    };
  }
  if (m.index.count === 0 || (m.fpdus === 0 && !m.flows.some((f) => f.request || f.reply))) {
    const tcp = m.flows.length;
    return {
      title: 'No MPA in this capture',
      lines: [
        [
          {
            t: `${m.packets} packets, ${tcp} TCP flow${tcp === 1 ? '' : 's'}; none carried MPA startup frames or FPDUs the heuristic could lock on to.`,
          },
        ],
        [],
        [{ t: 'A capture started mid-connection without markers may need MPA forced on:' }],
        [{ t: "  mpa-dissect tui --mpa 'flow=port:4420,markers=both,crc=on' capture.pcap", s: 'bold' }],
        [{ t: 'Any key shows the flows; q quits.', s: 'dim' }],
      ],
      tone: 'normal',
    };
  }
  return null;
}
