/** Every key of the terminal UI, declared once: the help screen (`?`), the man page and docs/tui.md read this table. */
export interface KeyHelp {
  readonly keys: string;
  readonly does: string;
}

export const KEYS: readonly KeyHelp[] = [
  { keys: '↑ ↓  j k', does: 'move the selection in the focused pane' },
  { keys: 'PgUp PgDn', does: 'move by a page' },
  { keys: 'g G  Home End', does: 'first / last row' },
  { keys: 'Tab  Shift-Tab', does: 'next / previous pane (flows, PDUs, findings, tree, bytes)' },
  { keys: 'Enter', does: 'open: flow → its PDUs, PDU → its tree, finding → its PDU; in the tree, expand or collapse' },
  { keys: 'Space  ← →', does: 'in the tree: expand or collapse (→ expands, ← collapses or goes to the parent)' },
  { keys: '/', does: 'type a display filter (Wireshark syntax, as -Y); Enter applies, empty clears, Esc cancels' },
  { keys: 'n  N', does: 'next / previous PDU with a finding' },
  { keys: 'e', does: 'errors only: PDUs with an error finding (toggle)' },
  { keys: 'f', does: 'follow: keep the newest PDU of the list selected while the capture is read (toggle)' },
  { keys: 's', does: 'sort the flows: by first frame, by errors, by bytes' },
  { keys: 'c', does: 'findings pane: the selected flow / the whole capture (toggle)' },
  { keys: 'l', does: 'startup ladder of the selected flow in place of the findings (toggle)' },
  {
    keys: 'r',
    does: 'requests by latency, slowest first, in place of the findings (toggle); Enter goes to the request',
  },
  { keys: 'w', does: 'write a pcap: the selected flow (flows pane focused) or the PDUs listed; asks for a file name' },
  { keys: '?', does: 'this help' },
  { keys: 'q  Ctrl-C', does: 'quit' },
  { keys: 'mouse', does: 'click selects a row and focuses its pane; the wheel scrolls' },
];
