//! A destructive button that asks once more, inline: the first press arms it for one item (the button
//! then reads "Confirm"), a second press on the same item within the window confirms. Pressing another
//! item moves the question there; the question lapses by itself. No blocking native dialog.

export class ConfirmGate {
  /** The item waiting for its second press, if any. */
  armed = $state<string | null>(null);
  private timer: ReturnType<typeof setTimeout> | null = null;
  private readonly windowMs: number;

  constructor(windowMs = 4000) {
    this.windowMs = windowMs;
  }

  /** True when this press confirms `id`; otherwise arms `id` and returns false. */
  press(id: string): boolean {
    if (this.armed === id) {
      this.disarm();
      return true;
    }
    this.disarm();
    this.armed = id;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.armed = null;
    }, this.windowMs);
    return false;
  }

  isArmed(id: string): boolean {
    return this.armed === id;
  }

  disarm(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.armed = null;
  }
}
