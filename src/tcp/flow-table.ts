/**
 * The flow table: both directions of every current flow, found by their 4-tuple. Hot path: a
 * lookup builds no string and boxes no number.
 */
import type { TcpSegment } from '../net/segment.js';
import type { Dir } from './direction.js';

/**
 * Flow-table key: FNV-1a over the 4-tuple, folded to 30 bits so it stays a V8 small integer (no
 * string is built and no number boxed per lookup). Directions that collide are chained (Dir.chain).
 */
function tupleHash(src: string, sport: number, dst: string, dport: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < src.length; i++) h = Math.imul(h ^ src.charCodeAt(i), 0x01000193);
  h = Math.imul(h ^ sport, 0x01000193);
  for (let i = 0; i < dst.length; i++) h = Math.imul(h ^ dst.charCodeAt(i), 0x01000193);
  h = Math.imul(h ^ dport, 0x01000193);
  return (h ^ (h >>> 15)) & 0x3fffffff;
}

export class FlowTable {
  /** Directions by tupleHash (collisions chained through Dir.chain). */
  private readonly table = new Map<number, Dir>();

  lookup(s: TcpSegment): Dir | null {
    for (let d = this.table.get(tupleHash(s.src, s.srcPort, s.dst, s.dstPort)) ?? null; d !== null; d = d.chain) {
      if (d.srcPort === s.srcPort && d.dstPort === s.dstPort && d.srcAddr === s.src && d.dstAddr === s.dst) return d;
    }
    return null;
  }

  insert(d: Dir): void {
    const k = tupleHash(d.srcAddr, d.srcPort, d.dstAddr, d.dstPort);
    d.chain = this.table.get(k) ?? null;
    this.table.set(k, d);
  }

  remove(d: Dir): void {
    const k = tupleHash(d.srcAddr, d.srcPort, d.dstAddr, d.dstPort);
    const head = this.table.get(k);
    if (head === d) {
      if (d.chain === null) this.table.delete(k);
      else this.table.set(k, d.chain);
    } else {
      for (let x = head ?? null; x !== null; x = x.chain) {
        if (x.chain === d) {
          x.chain = d.chain;
          break;
        }
      }
    }
    d.chain = null;
  }
}
