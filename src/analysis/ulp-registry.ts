/**
 * The upper layers this build decodes above RDMAP, and how one is chosen for a connection (the
 * pipeline's side of the hand-off in dissectors/ddp-rdmap/ulp-handoff.ts): `--ulp` first (like
 * Wireshark's Decode As), then an upper layer's own private data in the MPA startup frames; failing
 * both, the connection's first Send decides, offered first to the upper layers registered on the
 * Responder's port and then to the others (Wireshark's heuristic sub-dissectors). A port alone never
 * decides: corpus and test traffic on port 4420 or 5445 that carries something else stays undecoded.
 */
import type { MpaFlow } from '../../dissectors/mpa/mpa-flow.js';
import type { MpaContext } from '../../dissectors/mpa/ulpdu.js';
import type { UlpChooser, UlpSelection } from '../../dissectors/ddp-rdmap/ulp-handoff.js';
import type { RequestTiming, UlpConnection, UpperLayerSpec } from '../../dissectors/ddp-rdmap/ulp-contract.js';
import { portOf } from '../net/segment.js';
import { ULP_SPECS, ulpSpec } from './ulp-specs.js';
import type { FlowHandle } from '../tcp/stream.js';
import { selects } from './flow-selector.js';
import type { UlpOptions, UlpOverride } from './pipeline-types.js';

export type { UlpOptions, UlpOverride };

/** The Private Data of a startup frame after the 4-octet RFC 6581 block, when it carries one. */
function ulpPrivateData(pd: Uint8Array | undefined, enhanced: boolean | undefined): Uint8Array | null {
  if (!pd) return null;
  if (!enhanced) return pd;
  return pd.length >= 4 ? pd.subarray(4) : null;
}

/** The connection facts an upper layer reads, from the MPA flow (read once, at its first message). */
export function connectionOf(f: MpaFlow, ctx: MpaContext): UlpConnection {
  const req = f.request;
  const rep = f.reply;
  const h = f.handle;
  const ports: [number, number] = [portOf(h.client), portOf(h.server)];
  const responderDir = ctx.initiatorDir === null ? null : ctx.initiatorDir === 0 ? 1 : 0;
  return {
    flow: h.id,
    initiatorDir: ctx.initiatorDir,
    ports,
    serverPort: responderDir === null ? ports[1] : ports[responderDir],
    requestPrivateData: ulpPrivateData(req?.privateData, req?.enhanced),
    replyPrivateData: ulpPrivateData(rep?.privateData, rep?.enhanced),
    rejected: rep?.r === true,
    requestIrd: ctx.requestIrd,
    requestOrd: ctx.requestOrd,
    replyIrd: ctx.replyIrd,
    replyOrd: ctx.replyOrd,
    leading: f.leading,
  };
}

/** `--ulp flow=all,proto=none`: no flow decodes an upper layer. */
export function ulpAllOff(o: UlpOptions): boolean {
  return o.overrides.some((x) => x.selector.kind === 'all' && x.proto === 'none');
}

/** The pipeline's chooser: one per analysis (no closure per flow); `forced` is looked up per flow. */
export class UlpRegistry implements UlpChooser {
  readonly clock = { now: Number.NaN, frame: 0 };
  /** Facts spanning connections of this analysis (UlpEnvironment.shared). */
  readonly shared = new Map<string, unknown>();

  constructor(
    private readonly opts: UlpOptions,
    readonly timing: (t: RequestTiming) => void,
  ) {}

  /** True when every flow is forced to no upper layer (`--ulp flow=all,proto=none`). */
  get off(): boolean {
    return ulpAllOff(this.opts);
  }

  /** The override naming this flow, if any (the last one given wins, as for --mpa). */
  forcedFor(h: FlowHandle): UlpOverride | undefined {
    let found: UlpOverride | undefined;
    for (const o of this.opts.overrides) if (selects(o.selector, h)) found = o;
    return found;
  }

  /** Per-connection decision, for a flow no --ulp names. */
  select(c: UlpConnection): UlpSelection {
    return this.selectFor(c, undefined);
  }

  /** A chooser for a flow an override names (one small object for each such flow). */
  forcedChooser(forced: UlpOverride): UlpChooser {
    return { select: (c) => this.selectFor(c, forced), timing: this.timing, clock: this.clock, shared: this.shared };
  }

  /** Candidate lists by server port (null: unknown), shared by the flows on it: read only. */
  private readonly byPort = new Map<number | null, readonly UpperLayerSpec[]>();

  private selectFor(c: UlpConnection, forced: UlpOverride | undefined): UlpSelection {
    if (forced) {
      if (forced.proto === 'none') return { spec: null, basis: null, candidates: [] };
      return { spec: ulpSpec(forced.proto) ?? null, basis: 'forced', candidates: [] };
    }
    for (const s of ULP_SPECS) if (s.privateData(c)) return { spec: s, basis: 'private-data', candidates: [] };
    const port = c.serverPort;
    let candidates = this.byPort.get(port);
    if (candidates === undefined) {
      const onPort = ULP_SPECS.filter((s) => port !== null && s.ports.includes(port));
      candidates = [...onPort, ...ULP_SPECS.filter((s) => !onPort.includes(s))];
      this.byPort.set(port, candidates);
    }
    return { spec: null, basis: null, candidates };
  }
}
