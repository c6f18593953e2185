package oracle

// HoldRowLock records that another transaction holds the row lock of runID
// (select ... for update), until ReleaseRowLocks. A TenantFair visit that
// freezes the row cannot lock it and skips it (for update skip locked);
// lifecycle operations do not model the wait such a lock would cause, so a
// caller holds locks only across claims.
func (m *Model) HoldRowLock(runID string) error {
	r, ok := m.byRunID[runID]
	if !ok {
		return opError("HoldRowLock", ErrNotFound, "run %q", runID)
	}
	if m.rowLocks == nil {
		m.rowLocks = map[int64]bool{}
	}
	m.rowLocks[r.ID] = true
	return nil
}

// ReleaseRowLocks ends every row lock HoldRowLock recorded.
func (m *Model) ReleaseRowLocks() { m.rowLocks = nil }
