/**
 * Counts the open streams of each workspace on this replica against a limit. `take` refuses
 * with `refuse(limit)` at the limit, before any response is started (so the refusal can still
 * be a problem document), and answers the release, which is safe to call more than once.
 */
export class StreamSlots {
  private readonly open = new Map<string, number>();

  constructor(
    private readonly limit: number,
    private readonly refuse: (limit: number) => Error,
  ) {}

  take(workspaceId: string): () => void {
    const count = this.open.get(workspaceId) ?? 0;
    if (count >= this.limit) throw this.refuse(this.limit);
    this.open.set(workspaceId, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.open.get(workspaceId) ?? 1) - 1;
      if (left > 0) this.open.set(workspaceId, left);
      else this.open.delete(workspaceId);
    };
  }
}
