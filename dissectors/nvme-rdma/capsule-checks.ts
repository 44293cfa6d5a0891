/**
 * Checks of one capsule or of the connection's CM private data that need nothing but what they
 * are given: the RDMA CM private data (binding), the SGL forms the RDMA transport takes, and the
 * remote invalidation of a completion. The queue's dissector (dissector.ts) keeps the state.
 */
import type { SendMessage, UlpConnection } from '../ddp-rdmap/ulp-contract.js';
import { CM_PD_LEN, type CmReject, type CmReply, type CmRequest, type Sgl, type Sqe } from './decode.js';
import { CM_REJ_NAMES, commandName } from './names.js';
import { NVME_RULE as R } from './rules.js';

/** Where a finding is: a message, or nothing (seq null). */
export type At = { readonly seq: number | null; readonly frames: readonly number[]; readonly from?: string | null };
/** Reports a finding of `rule` (the dissector counts and caps them per connection). */
export type Report = (rule: string, at: At, message: string) => void;

/** The CM private data of the MPA startup frames (binding: RDMA_CM_REQUEST / ACCEPT / REJECT). */
export function checkCm(
  report: Report,
  c: UlpConnection,
  cmReq: CmRequest | null,
  cmRep: CmReply | null,
  cmRej: CmReject | null,
): void {
  const none: At = { seq: null, frames: [] };
  const req = c.requestPrivateData;
  if (req && (req.length < CM_PD_LEN || (cmReq && cmReq.recfmt !== 0)))
    report(
      R.cmMalformed,
      none,
      `MPA Request private data: ${req.length} octets, RECFMT ${cmReq?.recfmt ?? '?'}; RDMA_CM_REQUEST is 32 octets with RECFMT 0`,
    );
  const rep = c.replyPrivateData;
  if (rep && !c.rejected && (rep.length < CM_PD_LEN || (cmRep && cmRep.recfmt !== 0)))
    report(
      R.cmMalformed,
      none,
      `MPA Reply private data: ${rep.length} octets, RECFMT ${cmRep?.recfmt ?? '?'}; RDMA_CM_ACCEPT is 32 octets with RECFMT 0`,
    );
  if (cmRej)
    report(
      R.cmRejected,
      none,
      `the controller rejected queue ${cmReq?.qid ?? '?'}: ${CM_REJ_NAMES[cmRej.status] ?? `status ${cmRej.status}`}`,
    );
  if (cmReq && cmReq.qid === 0 && cmReq.hsqsize + 1 > 32)
    report(R.cmAdminDepth, none, `admin queue HSQSIZE ${cmReq.hsqsize} (${cmReq.hsqsize + 1} entries) > 32`);
}

/** PSDT and the SGL forms the RDMA transport takes (binding; Linux nvmet_req_init, nvmet_rdma_map_sgl). */
export function checkSgl(report: Report, m: SendMessage, sqe: Sqe, dataLength: number, admin: boolean): void {
  const s = sqe.sgl;
  if (sqe.psdt === 1 && s.kind !== 'other' && s.kind !== 'in-capsule') return; // the bulk: nothing to check
  const name = `${commandName(sqe.opc, sqe.fctype, admin)} CID ${sqe.cid}`;
  if (sqe.psdt !== 1)
    report(R.psdt, m, `${name}: PSDT ${sqe.psdt.toString(2).padStart(2, '0')}b; fabrics commands use SGLs (01b)`);
  if (s.kind === 'other')
    report(
      R.sglType,
      m,
      `${name}: SGL identifier 0x${s.id.toString(16).padStart(2, '0')} (type ${s.type}, subtype ${s.subtype}); RDMA takes 0x40, 0x4F or 0x01`,
    );
  if (s.kind === 'in-capsule' && s.addr + BigInt(s.length) > BigInt(dataLength))
    report(
      R.inCapsule,
      m,
      `${name}: in-capsule SGL offset ${s.addr} + length ${s.length} > the ${dataLength} octets after the SQE`,
    );
}

/** Send with Invalidate only of the command's key, and only when its SGL asked (binding). */
export function checkInvalidate(
  report: Report,
  m: SendMessage,
  cmd: { readonly command: string; readonly cid: number; readonly keyed: Sgl | null },
): void {
  const k = cmd.keyed;
  if (m.invalidateStag === null && k?.kind !== 'keyed-invalidate') return; // nothing asked, nothing done
  if (m.invalidateStag !== null) {
    if (k?.kind !== 'keyed-invalidate')
      report(
        R.invalidateUnasked,
        m,
        `${cmd.command} CID ${cmd.cid}: completion invalidates STag 0x${m.invalidateStag.toString(16).padStart(8, '0')}; the command's SGL ${k ? 'is subtype 0 (no invalidation asked)' : 'has no key'}`,
      );
    else if (k.key !== m.invalidateStag)
      report(
        R.invalidateWrongKey,
        m,
        `${cmd.command} CID ${cmd.cid}: completion invalidates STag 0x${m.invalidateStag.toString(16).padStart(8, '0')}; the command's key is 0x${k.key!.toString(16).padStart(8, '0')}`,
      );
  } else if (k && k.kind === 'keyed-invalidate')
    report(
      R.invalidateSkipped,
      m,
      `${cmd.command} CID ${cmd.cid}: SGL subtype Fh asked for invalidation of key 0x${k.key!.toString(16).padStart(8, '0')}; the completion is a plain Send`,
    );
}
