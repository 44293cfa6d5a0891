import {
  LINKTYPE_ETHERNET,
  LINKTYPE_LINUX_SLL,
  LINKTYPE_LINUX_SLL2,
  LINKTYPE_LOOP,
  LINKTYPE_NULL,
  LINKTYPE_RAW,
} from '../link-types.js';

/**
 * libpcap's data link type names (pcap_datalink_val_to_name, as tcpdump prints them in "listening
 * on lo, link-type EN10MB") and the names the cap binding returns, to LINKTYPE_* values.
 */
const BY_NAME: Readonly<Record<string, number>> = {
  EN10MB: LINKTYPE_ETHERNET,
  ETHERNET: LINKTYPE_ETHERNET,
  NULL: LINKTYPE_NULL,
  LOOP: LINKTYPE_LOOP,
  RAW: LINKTYPE_RAW,
  LINUX_SLL: LINKTYPE_LINUX_SLL,
  LINKTYPE_LINUX_SLL: LINKTYPE_LINUX_SLL,
  LINUX_SLL2: LINKTYPE_LINUX_SLL2,
  IEEE802_11_RADIO: 127,
};

/** LINKTYPE_* for a libpcap or cap link type name; cap's "Unknown linktype N" gives N (a DLT, equal to the LINKTYPE for these). */
export function linkTypeOf(name: string): number | null {
  const v = BY_NAME[name.toUpperCase()];
  if (v !== undefined) return v;
  const m = /(\d+)\s*$/.exec(name);
  return m ? Number(m[1]) : null;
}
