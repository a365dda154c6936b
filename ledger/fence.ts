// The epoch fence of controller writes. On becoming leader a controller bumps
// `controller_epoch`; every controller write joins it on `epoch = ?` (the writer's epoch is the
// statement's first argument), so once a newer leader has bumped it, a paused ex-leader's late
// statements match no row and change nothing. See docs/design.md, "Fencing".
export const FENCE = 'JOIN controller_epoch e ON e.id = 1 AND e.epoch = ?';
