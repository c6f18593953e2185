package docket

import (
	"fmt"
	"slices"
	"strings"
)

// Transition names an operator transition of one run. Its value is also the
// name of the "docket runs" action and of the console's run action that
// apply it.
type Transition string

// The operator transitions.
const (
	// TransitionCancel finishes an unfinished run as cancelled: a MutateRun
	// to StatusCancelled.
	TransitionCancel Transition = "cancel"
	// TransitionResume sends a waiting run back to work: a MutateRun to
	// StatusRunning.
	TransitionResume Transition = "resume"
	// TransitionRetry sends a failed or cancelled run, or a done one with
	// Force, back to work: RetryRun.
	TransitionRetry Transition = "retry"
	// TransitionRetryPoisoned revives a poisoned run: RetryPoisonedRun.
	TransitionRetryPoisoned Transition = "retry-poisoned"
)

// phasePoisoned is the phase of a poisoned run, whose status is running.
const phasePoisoned = "poisoned"

// phaseOf is the state of r the transitions read: "poisoned" for a
// poisoned run, else its status.
func phaseOf(r Run) string {
	if r.Poisoned() {
		return phasePoisoned
	}
	return string(r.Status)
}

// transitionRule is one transition's rule.
type transitionRule struct {
	// phases are the phases it applies to; forced those it applies to only
	// with RetryRunOptions.Force.
	phases, forced []string
	// purpose says what it does to a run, for a refusal that names it
	// instead; "" when no refusal names it.
	purpose string
	// goCall is the Go call that applies it, as Error names it.
	goCall string
}

// transitionRules are the rules of the operator transitions: RetryRun,
// RetryPoisonedRun, the CLI and the console check them, and the refusals
// are phrased from them.
var transitionRules = map[Transition]transitionRule{
	TransitionCancel: {phases: []string{string(StatusRunning), string(StatusWaiting), phasePoisoned},
		goCall: "MutateRun with StatusCancelled"},
	TransitionResume: {phases: []string{string(StatusWaiting)},
		purpose: "to send it back to work", goCall: "MutateRun with StatusRunning"},
	TransitionRetry: {phases: []string{string(StatusFailed), string(StatusCancelled)}, forced: []string{string(StatusDone)},
		purpose: "to run it again", goCall: "RetryRun"},
	TransitionRetryPoisoned: {phases: []string{phasePoisoned},
		purpose: "to revive it", goCall: "RetryPoisonedRun"},
}

// remedyOrder is the order in which a refusal looks for the transition that
// applies instead.
var remedyOrder = []Transition{TransitionRetryPoisoned, TransitionRetry, TransitionResume}

// Allows reports whether t applies to r (a retry of a done run needs Force,
// which Allows does not assume).
func (t Transition) Allows(r Run) bool {
	return t.check(r, false) == nil
}

// Check returns nil when t applies to r, else a *TransitionError that says
// why not.
func (t Transition) Check(r Run) error {
	return t.check(r, false)
}

// check is Check, with Force for a retry.
func (t Transition) check(r Run, force bool) error {
	rule, ok := transitionRules[t]
	if !ok {
		return invalidArgument("unknown run transition %q", t)
	}
	phase := phaseOf(r)
	if slices.Contains(rule.phases, phase) || force && slices.Contains(rule.forced, phase) {
		return nil
	}
	return &TransitionError{RunID: r.RunID, Transition: t, Phase: phase}
}

// TransitionError reports an operator transition that the run's state does
// not allow; nothing was changed. It matches ErrInvalidTransition.
type TransitionError struct {
	// RunID is the run's id.
	RunID string
	// Transition is the refused transition.
	Transition Transition
	// Phase is the run's state: its status, or "poisoned".
	Phase string
}

// Error phrases the refusal with the Go calls that apply the transitions.
func (e *TransitionError) Error() string {
	return ErrInvalidTransition.Error() + ": " + e.Explain(func(t Transition, force bool) string {
		if force {
			return transitionRules[t].goCall + " with Force"
		}
		return transitionRules[t].goCall
	})
}

// Is reports ErrInvalidTransition.
func (e *TransitionError) Is(target error) bool { return target == ErrInvalidTransition }

// Explain phrases the refusal for a caller with names of its own: what
// state the run is in, which states the transition applies to, and the
// transition that applies to the run instead, if any, as name(t, force)
// calls it (force: with RetryRunOptions.Force); a name of "" leaves that
// part out.
func (e *TransitionError) Explain(name func(t Transition, force bool) string) string {
	text := fmt.Sprintf("run %q is %s; %s applies only to a run that is %s",
		e.RunID, e.Phase, e.Transition, orList(transitionRules[e.Transition].phases))
	if t, force, ok := e.remedy(); ok {
		if call := name(t, force); call != "" {
			text += fmt.Sprintf("; use %s %s", call, transitionRules[t].purpose)
		}
	}
	return text
}

// remedy returns the transition that applies to the run instead: another
// transition that applies to its phase, or the same one with Force.
func (e *TransitionError) remedy() (Transition, bool, bool) {
	for _, t := range remedyOrder {
		rule := transitionRules[t]
		switch {
		case t != e.Transition && slices.Contains(rule.phases, e.Phase):
			return t, false, true
		case slices.Contains(rule.forced, e.Phase):
			return t, true, true
		}
	}
	return "", false, false
}

// orList joins words as "a", "a or b", "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
