/**
 * IPv4 and IPv6 addresses for display filters: "10.0.0.1", "10.0.0.0/24", "fd00::1", "fd00::/64".
 * An address is a bigint of 32 or 128 bits, so ordering and CIDR tests are integer operations.
 */

export type Family = 4 | 6;

export interface Address {
  readonly family: Family;
  readonly value: bigint;
  /** Prefix length in bits (32 or 128 for a single address). */
  readonly prefix: number;
}

const FAMILY_BITS: Readonly<Record<Family, number>> = { 4: 32, 6: 128 };

export function familyBits(f: Family): number {
  return FAMILY_BITS[f];
}

function ipv4(text: string): bigint | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let v = 0n;
  for (const p of parts) {
    if (!/^[0-9]{1,3}$/.test(p) || Number(p) > 255) return undefined;
    v = (v << 8n) | BigInt(p);
  }
  return v;
}

function ipv6(text: string): bigint | undefined {
  if (text.length > 45) return undefined;
  let groups: string[];
  const dbl = text.indexOf('::');
  if (dbl >= 0) {
    if (text.indexOf('::', dbl + 1) >= 0) return undefined;
    const head = text.slice(0, dbl) === '' ? [] : text.slice(0, dbl).split(':');
    const tail = text.slice(dbl + 2) === '' ? [] : text.slice(dbl + 2).split(':');
    groups = [...head, '', ...tail];
  } else groups = text.split(':');
  // A dotted IPv4 tail ("::ffff:10.0.0.1") stands for the last two groups.
  const last = groups[groups.length - 1] ?? '';
  const words: bigint[] = [];
  let zeroFill = -1;
  for (let i = 0; i < groups.length; i++) {
    const g = groups[i]!;
    if (g === '' && dbl >= 0 && zeroFill < 0) {
      zeroFill = words.length;
      continue;
    }
    if (i === groups.length - 1 && last.includes('.')) {
      const v4 = ipv4(last);
      if (v4 === undefined) return undefined;
      words.push(v4 >> 16n, v4 & 0xffffn);
      continue;
    }
    if (!/^[0-9A-Fa-f]{1,4}$/.test(g)) return undefined;
    words.push(BigInt(parseInt(g, 16)));
  }
  if (zeroFill >= 0) {
    if (words.length > 7) return undefined;
    words.splice(zeroFill, 0, ...new Array<bigint>(8 - words.length).fill(0n));
  }
  if (words.length !== 8) return undefined;
  return words.reduce((acc, w) => (acc << 16n) | w, 0n);
}

/** A single address of the family, or undefined. Field values are read with this. */
export function parseAddress(text: string, family: Family): bigint | undefined {
  return family === 4 ? ipv4(text) : ipv6(text);
}

/** An address with an optional "/prefix", or the reason it is not one (tshark's wording). */
export function parseCidr(text: string, family: Family): Address | string {
  const slash = text.indexOf('/');
  const addrText = slash >= 0 ? text.slice(0, slash) : text;
  const value = parseAddress(addrText, family);
  const name = family === 4 ? 'IPv4' : 'IPv6';
  if (value === undefined) return `"${text}" is not a valid ${name} address.`;
  const bits = familyBits(family);
  if (slash < 0) return { family, value, prefix: bits };
  const p = text.slice(slash + 1);
  const prefix = /^[0-9]{1,3}$/.test(p) ? Number(p) : Infinity;
  if (prefix > bits) return `Netmask bits in a CIDR ${name} address should be <= ${bits}, not ${p}`;
  return { family, value, prefix };
}

/** Compares an address with a literal address or network: 0 when inside the network. */
export function compareAddress(v: bigint, lit: Address): number {
  const shift = BigInt(familyBits(lit.family) - lit.prefix);
  const a = v >> shift;
  const b = lit.value >> shift;
  return a < b ? -1 : a > b ? 1 : 0;
}

export function formatAddress(a: Address): string {
  const bits = familyBits(a.family);
  let s: string;
  if (a.family === 4) s = [24n, 16n, 8n, 0n].map((sh) => String((a.value >> sh) & 0xffn)).join('.');
  else s = Array.from({ length: 8 }, (_, i) => ((a.value >> BigInt(112 - 16 * i)) & 0xffffn).toString(16)).join(':');
  return a.prefix === bits ? s : `${s}/${a.prefix}`;
}
