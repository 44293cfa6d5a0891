/**
 * Where the FPDUs of a direction are, when no startup frame says so: the 'scan' state (a startup key,
 * MPA enabled without startup frames, or FPDUs found mid-stream), the 'hunt' state (framing resumed
 * after capture loss, a framing error or a negotiation not seen) and the 'streaming' state after a
 * reject (RFC 5044 §7.1.2: no FPDUs may follow). The boundary search itself is lock-on.ts.
 */
import {
  ENABLEMENT_BUDGET,
  ENABLEMENT_WINDOW,
  enable,
  enablementOpen,
  findEnablement,
  type EnablementQuery,
} from './enablement.js';
import { ACCEPT_ALL, type FlowHost } from './flow-host.js';
import { MARKER_INTERVAL } from './framer.js';
import { findLock, LockSearch, type LockResult } from './lock-on.js';
import type { MpaDirection } from './mpa-direction.js';

export function stepScan(flow: FlowHost, d: MpaDirection, final: boolean): void {
  const at = d.findKey();
  if (at !== null) {
    d.beginStartup(at);
    return;
  }
  // Fewer than 64 octets are looked at only once they are all there will be (a direction of a few
  // tiny FPDUs); before that, more are worth waiting for.
  if (d.huntScanned < flow.huntBudget && (d.log.length >= 64 || final) && d.shouldTryHunt(final)) {
    const open = enablementOpen(flow, d);
    if (open) {
      const q: EnablementQuery = {
        bytes: d.log.bytes,
        base: d.log.base,
        baseSeq: d.info.baseSeq,
        final,
        plausible: flow.plausible,
        from: d.enableFrom,
        budget: Math.min(8 * 1024 * 1024, ENABLEMENT_BUDGET - d.enableSpent),
      };
      const en = findEnablement(q);
      if (en) {
        enable(flow, d, en);
        return;
      }
      // Remembered only when worth it (a rescan of a few KiB costs less than the state per flow).
      if ((q.decidedTo ?? 0) - d.enableFrom >= 4096) d.enableFrom = q.decidedTo!;
      if (q.spent) d.enableSpent += q.spent;
      // A pre-standard stream is held whole until its enablement point can be judged: the
      // mid-stream search would lock on a later FPDU and miss where MPA began.
      if (!final && d.log.end < 2 * ENABLEMENT_WINDOW) return;
    }
    const lock = tryLock(flow, d, final, null);
    if (lock && open && lock.params.crc && !lock.params.markers) {
      // The stream's start was captured and no startup frame came: MPA without markers enabled at
      // the first octet of a verified FPDU chain (draft-00 §8.1 rule 7: no marker when they are off).
      enable(flow, d, {
        offset: lock.offset,
        params: { ...lock.params, fpduptrFrom: 'fpdu' },
        fpdus: lock.fpdus,
        draftMarkers: 0,
        rfcMarkers: 0,
        evidence: lock.evidence,
      });
      return;
    }
    if (lock) {
      flow.detection ??= 'heuristic';
      d.seqStartExact = false;
      d.seqStartOffset = lock.params.markers ? firstMarkerOffset(lock) : null;
      flow.find(
        d,
        'mpa.mid-stream',
        d.seqOf(lock.offset),
        d.log.framesIn(lock.offset, lock.offset + 1),
        `MPA framing found mid-stream at seq ${d.seqOf(lock.offset)} (${lock.evidence}); markers ${lock.params.markers ? 'on' : 'off'}, CRC ${lock.params.crc ? 'on' : 'off'} inferred`,
      );
      if (flow.crc === null) flow.crc = lock.params.crc;
      frameFromLock(flow, d, lock);
      return;
    }
  }
  // Once the mid-stream search gave up, only a startup key can still turn this into MPA: hold little.
  const cap = d.huntScanned >= flow.huntBudget ? 8192 : flow.holdBytes;
  if (d.log.length > cap) {
    // Streaming data that is not MPA (yet): keep only the tail where a key could start.
    const keep = d.log.end - 4096; // a key split across chunks still fits
    d.huntScanned += keep - d.log.base;
    d.log.dropBefore(keep);
    d.resetHuntTries();
  }
}

/** Searches held bytes for FPDU boundaries; what is known (markers, CRC, SeqStart) narrows it. */
export function tryLock(
  flow: FlowHost,
  d: MpaDirection,
  final: boolean,
  known: { markerBase: number; alignBase: number; preferStart: boolean } | null,
): LockResult | null {
  const search = (d.lockSearch ??= new LockSearch(flow.opts.lockBudget));
  const lock = findLock({
    bytes: d.log.bytes,
    base: d.log.base,
    baseSeq: d.info.baseSeq,
    final,
    markers: d.params?.markers ?? null,
    markerBase: known?.markerBase ?? null,
    crc: d.params?.crc ?? flow.crc,
    alignBase: known?.alignBase ?? null,
    preferStart: known?.preferStart ?? false,
    // Forced by the user: MPA is a given, only markers and CRCs vouch for boundaries.
    plausible: flow.detection === 'forced' ? () => true : flow.plausible,
    search,
  });
  // Said once per direction, and only of MPA: on other TCP payload the search just stops quietly.
  if (search.exhaustions > 0 && !search.reported && flow.isMpa) {
    search.reported = true;
    const at = Math.max(search.stoppedAt, d.log.base);
    flow.find(
      d,
      'mpa.lock-on-budget',
      d.seqOf(at),
      d.log.framesIn(at, at + 1),
      `FPDU boundary search gave up at seq ${d.seqOf(at)} after ${search.spentUnits} units of work (budget ${search.budget.initial} + ${search.budget.perOctet} per octet); octets it could not examine are skipped`,
    );
  }
  return lock;
}

export function frameFromLock(flow: FlowHost, d: MpaDirection, lock: LockResult): void {
  d.framingLostOpen = false;
  if (flow.opts.forced?.prestandard) lock.params.fpduptrFrom = 'fpdu';
  const skipped = lock.offset - d.log.base;
  if (skipped > 0) d.bytesSkipped += skipped;
  d.startFramer(lock.params, lock.offset);
  d.replayInto(lock.offset);
}

export function stepHunt(flow: FlowHost, d: MpaDirection, final: boolean): void {
  if (!d.shouldTryHunt(final)) {
    if (d.log.length > flow.holdBytes) slideHunt(flow, d);
    return;
  }
  const forced = flow.opts.forced;
  if (forced?.prestandard && d.enabledAt === null && !d.enablementReported && d.params) {
    // `start=` named the other direction: this one's enablement point is found by its zero marker.
    const en = findEnablement({
      bytes: d.log.bytes,
      base: d.log.base,
      baseSeq: d.info.baseSeq,
      final,
      plausible: ACCEPT_ALL,
      markers: d.params.markers,
      crc: d.params.crc,
    });
    if (en) {
      enable(flow, d, en);
      return;
    }
  }
  // SeqStart (exact, or mod 512 after a mid-stream lock) fixes the marker phase and 4-alignment.
  const ss = d.seqStartOffset;
  const lock = tryLock(
    flow,
    d,
    final,
    ss !== null ? { markerBase: ss, alignBase: ss, preferStart: d.huntReason === 'error' } : null,
  );
  if (lock) {
    const skipped = lock.offset - d.log.base;
    const frames = d.log.framesIn(lock.offset, lock.offset + 1);
    if (d.huntReason === 'midstream' && flow.detection === 'forced') {
      // forced flow without SeqStart: say where framing began
      flow.find(
        d,
        'mpa.resync',
        d.seqOf(lock.offset),
        frames,
        `forced MPA: framing starts at seq ${d.seqOf(lock.offset)} (${lock.evidence})`,
      );
    } else if (skipped > 0 || d.huntReason !== 'error') {
      flow.find(
        d,
        'mpa.resync',
        d.seqOf(lock.offset),
        frames,
        `framing resumed at seq ${d.seqOf(lock.offset)} after ${d.huntReason === 'gap' ? 'capture loss' : d.huntReason === 'error' ? 'a framing error' : 'waiting for negotiation'}; ${skipped} octets skipped (${lock.evidence})`,
      );
    }
    if (d.seqStartOffset === null && lock.params.markers) {
      d.seqStartOffset = firstMarkerOffset(lock);
      d.seqStartExact = false;
    }
    frameFromLock(flow, d, lock);
    return;
  }
  if (final) {
    if (d.log.length > 0) {
      d.bytesSkipped += d.log.length;
      if (!d.framingLostOpen)
        flow.find(
          d,
          'mpa.framing-lost',
          d.seqOf(d.log.base),
          d.log.framesIn(d.log.base, d.log.end),
          `no FPDU boundary found again in the last ${d.log.length} octets of the stream`,
        );
    }
    d.log.reset(d.log.end);
    return;
  }
  if (d.log.length > flow.holdBytes) slideHunt(flow, d);
}

function slideHunt(flow: FlowHost, d: MpaDirection): void {
  const drop = d.log.length - (flow.holdBytes >> 1);
  d.bytesSkipped += drop;
  d.log.dropBefore(d.log.base + drop);
  d.resetHuntTries();
}

export function stepStreaming(flow: FlowHost, d: MpaDirection, final: boolean): void {
  // After a reject the connection is in streaming mode. FPDUs here are a violation; look once.
  if (!d.fpduAfterRejectReported && d.seqStartOffset !== null && d.log.length > 0 && (final || d.log.length >= 64)) {
    const ss = d.seqStartOffset;
    const lock = tryLock(flow, d, final, { markerBase: ss, alignBase: ss, preferStart: true });
    if (lock && lock.offset === d.seqStartOffset) {
      d.fpduAfterRejectReported = true;
      flow.find(
        d,
        'mpa.fpdu-after-reject',
        d.seqOf(lock.offset),
        d.log.framesIn(lock.offset, lock.offset + 1),
        `${lock.fpdus} valid FPDU(s) sent after the connection was rejected (${lock.evidence})`,
      );
      // They are on the wire: framed, counted and decoded like any FPDU (the finding says they
      // should not be there).
      frameFromLock(flow, d, lock);
      return;
    } else if (final || d.log.length >= 4096) d.fpduAfterRejectReported = true;
  }
  if (d.log.length > 4096 || d.fpduAfterRejectReported) d.log.reset(d.log.end);
}

/** Stream offset of the first marker position at or after a lock: congruent to SeqStart mod 512. */
function firstMarkerOffset(lock: LockResult): number {
  const base = lock.params.markerBase;
  return lock.offset + ((((base - lock.offset) % MARKER_INTERVAL) + MARKER_INTERVAL) % MARKER_INTERVAL);
}
