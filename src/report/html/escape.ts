/**
 * Text into HTML: every string that came from a capture (endpoints, messages, rule text, a file
 * name) goes through esc(), in element content and in quoted attributes alike, so a flow or
 * message holding `<script>` or a quote is shown, never run.
 */
const MAP: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function esc(s: unknown): string {
  return String(s).replace(/[&<>"']/g, (c) => MAP[c]!);
}

/** A number with thousands separated by thin spaces (as text, then escaped by the caller). */
export function num(n: number): string {
  return Number.isInteger(n) ? n.toLocaleString('en-US') : n.toFixed(3);
}

/** Seconds as the page shows durations and response times: s, ms or µs. */
export function seconds(s: number): string {
  if (!Number.isFinite(s)) return '-';
  const a = Math.abs(s);
  if (a >= 1) return `${s.toFixed(3)} s`;
  if (a >= 1e-3) return `${(s * 1e3).toFixed(3)} ms`;
  return `${(s * 1e6).toFixed(1)} µs`;
}

/** Octets, shortened: 1.5 KiB, 3.2 MiB. */
export function octets(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1 << 20) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1 << 30) return `${(n / (1 << 20)).toFixed(1)} MiB`;
  return `${(n / (1 << 30)).toFixed(2)} GiB`;
}
