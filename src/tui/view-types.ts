/**
 * What the view model hands out and takes in: pane ids and rectangles, the panes, overlay and prompt
 * to draw, and the action a key asks of the screen. Shared by the view model's files and the blessed layer.
 */
import type { Line } from './lines.js';

export type PaneId = 'flows' | 'pdus' | 'tree' | 'bytes' | 'findings';
export const PANES: readonly PaneId[] = ['flows', 'pdus', 'findings', 'tree', 'bytes'];

export interface Rect {
  readonly left: number;
  readonly top: number;
  readonly width: number;
  readonly height: number;
}

export interface PaneView {
  readonly id: PaneId;
  readonly title: string;
  readonly rect: Rect;
  /** The lines inside the border, already scrolled and cut to the inner size. */
  readonly lines: Line[];
  /** Row (within `lines`) of the selection, or -1. */
  readonly selected: number;
  readonly focused: boolean;
}

export interface Overlay {
  readonly title: string;
  readonly lines: Line[];
  /** 'error' draws a red border. */
  readonly tone: 'normal' | 'error';
}

export interface Prompt {
  readonly label: string;
  readonly text: string;
  /** The text as it fits the prompt's line (its start cut with "…" when longer). */
  readonly shown: string;
  /** The text offered when the prompt opened, still selected: typing replaces it. */
  readonly selected: boolean;
  /** Lines under the prompt: the filter error with its caret, or a hint. */
  readonly note: Line[];
}

export type Action = 'none' | 'redraw' | 'quit';

export type FlowSort = 'first frame' | 'errors' | 'bytes';
