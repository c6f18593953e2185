package oracle

// SetDefaultCap writes the persisted default cap (1..MaxCap, else
// ErrInvalidCap). Lowering it below a scope's admitted count creates
// non-preemptive debt; nothing is revoked.
func (m *Model) SetDefaultCap(c int) error {
	if err := validCap("SetDefaultCap", c); err != nil {
		return err
	}
	m.defaultCap = c
	return nil
}

// SetOverride writes the cap override of scope (1..MaxCap, else
// ErrInvalidCap). An unknown scope gets its partition, and so its ring
// position, created now (with unfinished_count 0), as a partition upsert
// would.
func (m *Model) SetOverride(scope string, c int) error {
	if err := validCap("SetOverride", c); err != nil {
		return err
	}
	m.partitionFor(scope).Override = c
	return nil
}

// ResetOverride removes the cap override of scope so it inherits the
// default. Like SetOverride it creates the partition (and its ring position)
// of an unknown scope.
func (m *Model) ResetOverride(scope string) error {
	m.partitionFor(scope).Override = 0
	return nil
}

// Pause pauses scope, as PauseTenant does: its partition stays in the ring
// and every TenantFair visit of it ends as DispPaused, granting nothing.
// Legacy ignores the flag. Like SetOverride it creates the partition (and
// its ring position) of an unknown scope.
func (m *Model) Pause(scope string) {
	m.partitionFor(scope).Paused = true
}

// PauseDomain pauses the whole domain, as docket's PauseDomain does: every
// claim call of either engine returns nothing and changes nothing until
// ResumeDomain. Tenants' own pauses are kept.
func (m *Model) PauseDomain() { m.domainPaused = true }

// ResumeDomain undoes PauseDomain.
func (m *Model) ResumeDomain() { m.domainPaused = false }

// Resume undoes Pause; it too creates the partition of an unknown scope.
func (m *Model) Resume(scope string) {
	m.partitionFor(scope).Paused = false
}
