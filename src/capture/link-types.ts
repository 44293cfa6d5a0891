/** LINKTYPE_* values (https://www.tcpdump.org/linktypes.html) the project reads by name. */
export const LINKTYPE_NULL = 0;
export const LINKTYPE_ETHERNET = 1;
/** DLT_RAW as some platforms numbered it in files (12 on most BSDs, 14 on OpenBSD); both mean raw IP. */
export const LINKTYPE_RAW_12 = 12;
export const LINKTYPE_RAW_14 = 14;
export const LINKTYPE_RAW = 101;
export const LINKTYPE_LOOP = 108;
export const LINKTYPE_LINUX_SLL = 113;
export const LINKTYPE_IPV4 = 228;
export const LINKTYPE_IPV6 = 229;
export const LINKTYPE_LINUX_SLL2 = 276;
