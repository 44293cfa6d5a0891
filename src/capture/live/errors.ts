/**
 * Why a live capture cannot start, as one line the CLI prints before exiting with status 2: no
 * backend (what to install), no permission (how to grant it), an unknown interface (which exist),
 * a capture filter libpcap rejects.
 */
export class LiveCaptureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LiveCaptureError';
  }
}

export function noBackendError(): LiveCaptureError {
  return new LiveCaptureError(
    '-i: no capture backend available: install tcpdump (apt-get install tcpdump), or libpcap for the built-in binding (apt-get install libpcap-dev && npm rebuild cap)',
  );
}

export function permissionError(iface: string, backend: string, detail: string): LiveCaptureError {
  const grant =
    backend === 'cap'
      ? 'sudo setcap cap_net_raw,cap_net_admin=eip "$(readlink -f "$(command -v node)")"'
      : `sudo setcap cap_net_raw,cap_net_admin=eip "$(command -v ${backend})"`;
  return new LiveCaptureError(
    `-i ${iface}: no permission to capture (${detail.trim()}): run as root, or grant CAP_NET_RAW once with ${grant}`,
  );
}

export function unknownInterfaceError(iface: string, known: readonly string[]): LiveCaptureError {
  return new LiveCaptureError(
    `-i ${iface}: no such interface; the interfaces are: ${known.join(', ')} (mpa-dissect -D lists them)`,
  );
}

/** libpcap's words for "not allowed" (pcap_activate's PCAP_ERROR_PERM_DENIED, EPERM, EACCES). */
export function isPermissionText(s: string): boolean {
  return /permission|not permitted|EPERM|EACCES/i.test(s);
}

/** libpcap's words for a missing device. */
export function isNoDeviceText(s: string): boolean {
  return /no such device|doesn't exist|does not exist/i.test(s);
}
