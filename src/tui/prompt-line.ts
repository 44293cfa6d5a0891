/**
 * The one-line editor under the `/` and `w` prompts: the text typed, a default offered selected
 * (the first character typed replaces it, as a selected text field does), a length cap and the
 * flag that asks for the (debounced) filter check. Bounded on purpose: a 100 KB paste must cost
 * no more than the cap, not a filter compile and a redraw per character (issue 26).
 */

/** Characters a prompt holds; a paste past it is cut, and the prompt says so. 4096 is PATH_MAX. */
export const PROMPT_MAX = 4096;

export type PromptKind = 'filter' | 'write';

export class PromptLine {
  /** The text offered when the prompt opened is selected: typing replaces it, → or End keep it. */
  selected: boolean;
  /** Characters dropped because the prompt was full (a paste past PROMPT_MAX). */
  dropped = 0;
  /** The text changed since the filter was last checked (the screen checks it when typing pauses). */
  checkDue = false;

  constructor(
    readonly kind: PromptKind,
    public text: string,
    selected = text !== '',
  ) {
    this.selected = selected;
    if (text.length > PROMPT_MAX) this.text = text.slice(0, PROMPT_MAX);
  }

  /** Appends typed or pasted characters (control characters are the caller's to refuse). */
  insert(ch: string): void {
    if (this.selected) {
      this.text = '';
      this.selected = false;
    }
    const room = PROMPT_MAX - this.text.length;
    if (room <= 0) {
      this.dropped += ch.length;
      return;
    }
    if (ch.length > room) {
      this.dropped += ch.length - room;
      ch = ch.slice(0, room);
    }
    this.text += ch;
    this.checkDue = true;
  }

  backspace(): void {
    if (this.selected) this.text = '';
    else {
      // One code point, not one UTF-16 unit: an emoji goes whole.
      const last = this.text.codePointAt(this.text.length - 1);
      const cut = last !== undefined && last >= 0xdc00 && last <= 0xdfff && this.text.length >= 2 ? 2 : 1;
      this.text = this.text.slice(0, Math.max(0, this.text.length - cut));
    }
    this.selected = false;
    if (this.text.length < PROMPT_MAX) this.dropped = 0;
    this.checkDue = true;
  }

  clear(): void {
    this.text = '';
    this.selected = false;
    this.dropped = 0;
    this.checkDue = true;
  }

  /** Replaces the whole text (history, completion); not selected. */
  set(text: string): void {
    this.text = text.length > PROMPT_MAX ? text.slice(0, PROMPT_MAX) : text;
    this.selected = false;
    this.dropped = 0;
    this.checkDue = true;
  }

  /** → or End on a selected default: keep it and edit at its end. */
  keep(): void {
    this.selected = false;
  }

  /** The text as one line of `w` columns at most, its start cut with "…" so the end being typed stays in view. */
  shown(w: number): string {
    const cps = Array.from(this.text);
    if (cps.length <= w) return this.text;
    return w <= 1 ? '…' : `…${cps.slice(cps.length - (w - 1)).join('')}`;
  }
}
