// What the list's boxes select: some downloads by GID, or every download a filter matches (the
// filter's whole result, minus the boxes unticked since), and the calls that act on them: one
// haul.changeMatching with haul daemon, one system.multicall with aria2c.

/** aria2's calls for one download, by action (aria2c has no haul.changeMatching). */
const ARIA2_CALLS = {
  pause: (gid) => [['aria2.pause', [gid]]],
  unpause: (gid) => [['aria2.unpause', [gid]]],
  // A running or queued download is removed, a result forgotten: one of the two applies.
  remove: (gid) => [['aria2.forceRemove', [gid]], ['aria2.removeDownloadResult', [gid]]],
  moveToTop: (gid) => [['aria2.changePosition', [gid, 0, 'POS_SET']]],
};

export class Selection {
  constructor() {
    this.clear();
  }

  clear() {
    /** `{text, state, total}` when every match of that filter is selected. */
    this.matching = null;
    this.gids = new Set();
    this.except = new Set();
  }

  /** Selects every download the filter matches (`total` of them now). */
  selectMatching(filter, total) {
    this.matching = { ...filter, total };
    this.gids = new Set();
    this.except = new Set();
  }

  has(gid) {
    return this.matching ? !this.except.has(gid) : this.gids.has(gid);
  }

  set(gid, selected) {
    const list = this.matching ? this.except : this.gids;
    if (selected === !this.matching) list.add(gid);
    else list.delete(gid);
  }

  toggle(gid) {
    this.set(gid, !this.has(gid));
  }

  get count() {
    return this.matching ? Math.max(0, this.matching.total - this.except.size) : this.gids.size;
  }

  /** A filter changed: a selection of its matches no longer says what is shown. */
  filterChanged(filter) {
    if (this.matching && (this.matching.text !== filter.text || this.matching.state !== filter.state)) this.clear();
  }

  /**
   * Does `action` (pause, unpause, remove, moveToTop) to the selection in one call; resolves to
   * `{changed, unchanged}`.
   */
  async apply(client, action, { extensions }) {
    if (this.matching) {
      const { text, state } = this.matching;
      return counts(await client.call('haul.changeMatching', [action, { text, state, except: [...this.except] }]));
    }
    const gids = [...this.gids];
    if (extensions) return counts(await client.call('haul.changeMatching', [action, { gids }]));
    // Moved to the top one by one, the last first, they keep their order there.
    const ordered = action === 'moveToTop' ? [...gids].reverse() : gids;
    const perGid = ordered.map((gid) => ARIA2_CALLS[action](gid));
    const answers = await client.multicall(perGid.flat());
    // A download changed when any of its calls did (a removal is one of two).
    let next = 0, changed = 0;
    for (const calls of perGid) {
      if (answers.slice(next, next + calls.length).some((answer) => !answer.error)) changed += 1;
      next += calls.length;
    }
    return { changed, unchanged: gids.length - changed };
  }
}

function counts(answer) {
  return { changed: Number(answer.changed) || 0, unchanged: Number(answer.unchanged) || 0 };
}
