package claimpolicy

import "github.com/docketrun/docket-go/policy"

// validClass reports whether c is one of the three work classes.
func validClass(c policy.WorkClass) bool {
	return c == policy.ClassAdmittedReady || c == policy.ClassQueuedReady || c == policy.ClassExpired
}

// tenantFairDisposition is the disposition TenantFair reports for class c.
func tenantFairDisposition(c policy.WorkClass) policy.OutcomeDisposition {
	switch c {
	case policy.ClassAdmittedReady:
		return policy.OutcomeAdmittedReacquisition
	case policy.ClassQueuedReady:
		return policy.OutcomeQueuedPromotion
	}
	return policy.OutcomeExpiredRecovery
}

// legacyDisposition is the disposition Legacy reports for class c.
func legacyDisposition(c policy.WorkClass) policy.OutcomeDisposition {
	if c == policy.ClassExpired {
		return policy.OutcomeExpiredRecovery
	}
	return ""
}

// validDisposition reports whether d is one of the inspection dispositions.
func validDisposition(d policy.Disposition) bool {
	switch d {
	case policy.DispositionGrant, policy.DispositionPartitionLockSkip, policy.DispositionEmptyPage,
		policy.DispositionLockMiss, policy.DispositionStale, policy.DispositionCapDebtDenial, policy.DispositionDenied,
		policy.DispositionPaused, policy.DispositionRateLimited:
		return true
	}
	return false
}

// ContentionPolicyCursor is the contention phase of
// policy.ReasonLockContention: the singleton policy cursor, the only proven
// contention point.
const ContentionPolicyCursor = "policy_cursor"

// knownReason reports whether r is one of the error reasons.
func knownReason(r string) bool {
	switch r {
	case policy.ReasonReadOnlyTransaction, policy.ReasonUnsupportedIsolation, policy.ReasonLockContention,
		policy.ReasonNotInitialized, policy.ReasonInactiveEngine, policy.ReasonMalformedPolicy:
		return true
	}
	return false
}
