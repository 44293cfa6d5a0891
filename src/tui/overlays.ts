/**
 * Screens over the panes: the keys help, and the notices that say why there is nothing to browse
 * (the capture failed or was unreadable, is empty, or carries no MPA).
 */
import type { CaptureModel } from './capture-model.js';
import { KEYS } from './keys.js';
import type { Line } from './lines.js';
import type { Overlay } from './view-types.js';

/**
 * The keys as help lines for a screen `width` columns wide: the key column, then what it does,
 * wrapped under itself so every key is there at 80 columns.
 */
export function helpLines(width: number): Line[] {
  const kw = Math.max(...KEYS.map((k) => k.keys.length)) + 2;
  // The overlay's border and a column of margin each side.
  const dw = Math.max(20, width - 6 - kw);
  const out: Line[] = [];
  for (const k of KEYS) {
    const parts = wrapWords(k.does, dw);
    out.push([{ t: k.keys.padEnd(kw), s: 'bold' }, { t: parts[0]! }]);
    for (const part of parts.slice(1)) out.push([{ t: ' '.repeat(kw) + part }]);
  }
  return out;
}

/** Splits `text` into lines of at most `w` columns at spaces (a word longer than `w` is cut). */
export function wrapWords(text: string, w: number): string[] {
  const out: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line === '') line = word;
    else if (Array.from(line).length + 1 + Array.from(word).length <= w) line += ` ${word}`;
    else {
      out.push(line);
      line = word;
    }
    while (Array.from(line).length > w) {
      const cps = Array.from(line);
      out.push(cps.slice(0, w).join(''));
      line = cps.slice(w).join('');
    }
  }
  if (line !== '' || out.length === 0) out.push(line);
  return out;
}

/** The rows of help the overlay shows on a screen `height` rows high (border and status bar off). */
export function helpRows(height: number): number {
  return Math.max(1, height - 4);
}

/** The help overlay scrolled to `top` (clamped by the caller with helpRows). */
export function helpOverlay(width: number, height: number, top: number): Overlay {
  const all = helpLines(width);
  const rows = helpRows(height);
  const more = all.length > rows;
  return {
    title: more
      ? `Keys ${top + 1}-${Math.min(all.length, top + rows)} of ${all.length} (↑↓ PgUp PgDn scroll, any other key closes)`
      : 'Keys (any key closes)',
    lines: all.slice(top, top + rows),
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
        [{ t: 'q quits (exit status 2, as mpa-dissect gives for it).', s: 'dim' }],
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
