/**
 * What the queues of one host/controller pair share across connections of a capture: the
 * controller IDs the admin queue's Connect returned, and the LBA size of each namespace an Identify
 * Namespace showed. Keyed by the host's address and the controller's port (the host's
 * endpoint is on its first Send; the controller's address may not be seen before the Connect); kept in the analysis' shared store
 * (UlpEnvironment.shared), bounded: the last MAX_ASSOCIATIONS pairs, a few controller IDs and
 * namespaces each.
 */
export interface Association {
  /** Controller IDs returned by admin-queue Connects (most recent last). */
  readonly cntlids: number[];
  /** NSID -> LBA data size in octets. */
  readonly lbaSize: Map<number, number>;
}

const STORE_KEY = 'nvme-rdma.associations';
const MAX_ASSOCIATIONS = 1024;
const MAX_CNTLIDS = 8;
const MAX_NAMESPACES = 256;

type Store = Map<string, Association>;

const addrOf = (endpoint: string): string => {
  const i = endpoint.lastIndexOf(':');
  return i < 0 ? endpoint : endpoint.slice(0, i);
};

/** The association of `host` ("ADDR:PORT") with the controller on `port`, created when absent. */
export function associationOf(
  shared: Map<string, unknown> | undefined,
  host: string,
  port: number | null,
): Association {
  let store = shared?.get(STORE_KEY) as Store | undefined;
  if (!store) {
    store = new Map();
    shared?.set(STORE_KEY, store);
  }
  const key = `${addrOf(host)}>${port ?? '?'}`;
  let a = store.get(key);
  if (!a) {
    a = { cntlids: [], lbaSize: new Map() };
    store.set(key, a);
    if (store.size > MAX_ASSOCIATIONS) store.delete(store.keys().next().value!);
  }
  return a;
}

export function addCntlid(a: Association, cntlid: number): void {
  const i = a.cntlids.indexOf(cntlid);
  if (i >= 0) a.cntlids.splice(i, 1);
  a.cntlids.push(cntlid);
  if (a.cntlids.length > MAX_CNTLIDS) a.cntlids.shift();
}

export function setLbaSize(a: Association, nsid: number, size: number): void {
  a.lbaSize.delete(nsid);
  a.lbaSize.set(nsid, size);
  if (a.lbaSize.size > MAX_NAMESPACES) a.lbaSize.delete(a.lbaSize.keys().next().value!);
}
