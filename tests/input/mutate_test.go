package input

import (
	"context"
	"encoding/json"
	"time"

	"github.com/docketrun/docket-go/docket"
)

// decide returns a decide function that always answers m.
func decide(m docket.Mutation) func(docket.Run) (docket.Mutation, error) {
	return func(docket.Run) (docket.Mutation, error) { return m, nil }
}

func mutateCases() []inputCase {
	bad := []struct {
		name   string
		runID  string
		scope  docket.Scope
		decide func(docket.Run) (docket.Mutation, error)
		want   error
		local  bool
	}{
		{"nil decide", runHeld, acme, nil, docket.ErrInvalidArgument, true},
		{"empty run id", "", acme, decide(docket.Mutation{Status: docket.StatusCancelled}), docket.ErrInvalidArgument, true},
		{"tenantless scope", runHeld, docket.Tenantless, decide(docket.Mutation{Status: docket.StatusCancelled}), docket.ErrTenantRequired, true},
		{"oversized tenant", runHeld, docket.Tenant(longID), decide(docket.Mutation{Status: docket.StatusCancelled}), docket.ErrInvalidArgument, true},
		{"tenant not UTF-8", runHeld, docket.Tenant(badUTF8), decide(docket.Mutation{Status: docket.StatusCancelled}), docket.ErrInvalidArgument, true},
		{"unknown run", unknownRun, acme, decide(docket.Mutation{Status: docket.StatusCancelled}), docket.ErrNotFound, false},
		{"another tenant's run", runOther, acme, decide(docket.Mutation{Status: docket.StatusCancelled}), docket.ErrNotFound, false},
		{"decide error", runHeld, acme, func(docket.Run) (docket.Mutation, error) {
			return docket.Mutation{}, errHardDecide
		}, errHardDecide, false},
		{"unknown status", runHeld, acme, decide(docket.Mutation{Status: "paused"}), docket.ErrInvalidArgument, false},
		{"wake time on a terminal status", runHeld, acme, decide(docket.Mutation{Status: docket.StatusDone, WakeAt: time.Now()}), docket.ErrInvalidArgument, false},
		{"wake time on waiting", runWaiting, acme, decide(docket.Mutation{Status: docket.StatusWaiting, WakeAt: time.Now()}), docket.ErrInvalidArgument, false},
		{"invalid JSON state", runWaiting, acme, decide(docket.Mutation{Status: docket.StatusRunning, State: json.RawMessage(`{`)}), docket.ErrInvalidArgument, false},
		{"oversized state", runWaiting, acme, decide(docket.Mutation{Status: docket.StatusRunning, State: hugeState}), docket.ErrInvalidArgument, false},
		{"reviving a finished run", runFinished, acme, decide(docket.Mutation{Status: docket.StatusRunning}), docket.ErrInvalidTransition, false},
		{"re-finishing a finished run", runFinished, acme, decide(docket.Mutation{Status: docket.StatusFailed}), docket.ErrInvalidTransition, false},
		{"running a poisoned run", runPoisoned, acme, decide(docket.Mutation{Status: docket.StatusRunning}), docket.ErrInvalidTransition, false},
		{"parking a poisoned run", runPoisoned, acme, decide(docket.Mutation{Status: docket.StatusWaiting}), docket.ErrInvalidTransition, false},
		// The zero Mutation is a documented no-op.
		{"zero Mutation", runHeld, acme, decide(docket.Mutation{}), nil, false},
	}
	var cases []inputCase
	for _, b := range bad {
		cases = append(cases, inputCase{name: "MutateRun " + b.name, want: wants(b.want), local: b.local,
			call: func(ctx context.Context, env *inputEnv) error {
				res, err := env.client.MutateRun(ctx, b.scope, b.runID, b.decide)
				if res.Changed {
					env.t.Fatalf("MutateRun reports a change")
				}
				return err
			}})
	}
	cancels := []struct {
		name  string
		runID string
		want  error
		local bool
	}{
		{"unknown run", unknownRun, docket.ErrNotFound, false},
		{"empty run id", "", docket.ErrInvalidArgument, true},
		{"run id not UTF-8", badUTF8, docket.ErrInvalidArgument, true},
		{"finished run (no-op)", runFinished, nil, false},
	}
	for _, b := range cancels {
		cases = append(cases, inputCase{name: "Cancel " + b.name, want: wants(b.want), local: b.local,
			call: func(ctx context.Context, env *inputEnv) error {
				res, err := env.client.Cancel(ctx, acme, b.runID)
				if res.Changed {
					env.t.Fatalf("Cancel reports a change")
				}
				return err
			}})
	}
	retries := []struct {
		name  string
		scope docket.Scope
		runID string
		want  error
		local bool
	}{
		{"healthy claimed run", acme, runHeld, docket.ErrInvalidTransition, false},
		{"finished run", acme, runFinished, docket.ErrInvalidTransition, false},
		{"waiting run", acme, runWaiting, docket.ErrInvalidTransition, false},
		{"unknown run", acme, unknownRun, docket.ErrNotFound, false},
		{"poisoned run under another tenant", docket.Tenant("globex"), runPoisoned, docket.ErrNotFound, false},
		{"empty run id", acme, "", docket.ErrInvalidArgument, true},
		{"tenantless scope", docket.Tenantless, runPoisoned, docket.ErrTenantRequired, true},
	}
	for _, b := range retries {
		cases = append(cases, inputCase{name: "RetryPoisonedRun " + b.name, want: wants(b.want), local: b.local,
			call: func(ctx context.Context, env *inputEnv) error {
				_, err := env.client.RetryPoisonedRun(ctx, b.scope, b.runID)
				return err
			}})
	}
	return append(cases,
		inputCase{name: "MutateRun cancelled context", want: []error{context.Canceled}, local: true, cancelled: true,
			call: func(ctx context.Context, env *inputEnv) error {
				_, err := env.client.MutateRun(ctx, acme, runWaiting, decide(docket.Mutation{Status: docket.StatusRunning}))
				return err
			}},
		inputCase{name: "RetryPoisonedRun cancelled context", want: []error{context.Canceled}, local: true, cancelled: true,
			call: func(ctx context.Context, env *inputEnv) error {
				_, err := env.client.RetryPoisonedRun(ctx, acme, runPoisoned)
				return err
			}},
	)
}
