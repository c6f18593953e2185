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
// default. An unknown scope returns ErrNotFound.
func (m *Model) ResetOverride(scope string) error {
	p, ok := m.parts[scope]
	if !ok {
		return opError("ResetOverride", ErrNotFound, "scope %q", scope)
	}
	p.Override = 0
	return nil
}
