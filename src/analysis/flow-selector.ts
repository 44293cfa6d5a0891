/** Whether a flow selector (`--mpa`, `--tuf`, `--ulp` flow=SEL) names a flow. */
import type { FlowHandle } from '../tcp/stream.js';
import type { FlowSelector } from './pipeline-types.js';

export function selects(sel: FlowSelector, h: Pick<FlowHandle, 'id' | 'client' | 'server'>): boolean {
  switch (sel.kind) {
    case 'all':
      return true;
    case 'id':
      return h.id === sel.id;
    case 'port':
      return h.client.endsWith(`:${sel.port}`) || h.server.endsWith(`:${sel.port}`);
    case 'endpoint':
      return h.client === sel.endpoint || h.server === sel.endpoint;
  }
}
