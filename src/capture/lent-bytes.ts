/**
 * Octets the capture reader lends instead of copying. A packet's bytes are a view into one of the
 * reader's two read buffers, which it overwrites with a later read. A consumer that keeps bytes
 * past the packet (MPA's held bytes, kept from the last plausible FPDU on in case the framing
 * breaks) may keep such a view instead of a copy, provided it registers as a holder: before the
 * reader overwrites any lent buffer it calls `recycling()`, and every holder copies what it still
 * holds. One flow at 1 GB/s copies almost nothing then (a direction holds about two FPDUs when a 4
 * MiB buffer comes round again), and no octet is copied more than once. Bytes from anywhere else
 * (reassembly slabs, IP fragments, worker batches, live sources) are not lent: keep copies of them.
 *
 * Per thread (module state): a worker thread has its own reader and its own holders.
 */

/** Something that keeps views into lent buffers and can copy them into memory of its own. */
export interface LentBytesHolder {
  /** Copies every lent view it holds into its own memory and forgets the views. */
  ownLentBytes(): void;
}

/** The reader's buffers, by their memory (a view's `.buffer`). At most a few at any time. */
const lent: ArrayBufferLike[] = [];
const holders: LentBytesHolder[] = [];

/** The reader lends views into `buf` from now until it calls `recycling()` before reusing it. */
export function lend(buf: Uint8Array): void {
  if (!lent.includes(buf.buffer)) lent.push(buf.buffer);
}

/** The reader is done with `buf` (its memory is never written again, or no longer handed out). */
export function unlend(buf: Uint8Array): void {
  const i = lent.indexOf(buf.buffer);
  if (i >= 0) lent.splice(i, 1);
}

/** A view into a buffer the reader lent: valid until the next `recycling()`. */
export function isLent(b: Uint8Array): boolean {
  const m = b.buffer;
  for (let i = 0; i < lent.length; i++) if (lent[i] === m) return true;
  return false;
}

/** Registers a holder of lent views (once until the next `recycling()`: the holder keeps a flag). */
export function holdLent(h: LentBytesHolder): void {
  holders.push(h);
}

/** A lent buffer is about to be overwritten: every holder copies what it still holds. */
export function recycling(): void {
  // A holder may register again while copying (it never does today); take the list first.
  const n = holders.length;
  for (let i = 0; i < n; i++) holders[i]!.ownLentBytes();
  holders.splice(0, n);
}
