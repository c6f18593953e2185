package tests

import (
	"context"
	"encoding/json"
	"time"

	"github.com/docketrun/docket-go/docket"
)

// hardDecide returns a decide function that always answers m.
func hardDecide(m docket.Mutation) func(docket.Run) (docket.Mutation, error) {
	return func(docket.Run) (docket.Mutation, error) { return m, nil }
}

func hardMutateCases() []hardInputCase {
	bad := []struct {
		name   string
		runID  string
		scope  docket.Scope
		decide func(docket.Run) (docket.Mutation, error)
		want   error
		local  bool
	}{
		{"nil decide", hardRunHeld, hardAcme, nil, docket.ErrInvalidArgument, true},
		{"empty run id", "", hardAcme, hardDecide(docket.Mutation{Status: docket.StatusCancelled}), docket.ErrInvalidArgument, true},
		{"tenantless scope", hardRunHeld, docket.Tenantless, hardDecide(docket.Mutation{Status: docket.StatusCancelled}), docket.ErrTenantRequired, true},
		{"oversized tenant", hardRunHeld, docket.Tenant(hardLongID), hardDecide(docket.Mutation{Status: docket.StatusCancelled}), docket.ErrNotFound, false},
		{"tenant not UTF-8", hardRunHeld, docket.Tenant(hardBadUTF8), hardDecide(docket.Mutation{Status: docket.StatusCancelled}), docket.ErrInvalidArgument, true},
		{"unknown run", hardUnknownRun, hardAcme, hardDecide(docket.Mutation{Status: docket.StatusCancelled}), docket.ErrNotFound, false},
		{"another tenant's run", hardRunOther, hardAcme, hardDecide(docket.Mutation{Status: docket.StatusCancelled}), docket.ErrNotFound, false},
		{"decide error", hardRunHeld, hardAcme, func(docket.Run) (docket.Mutation, error) {
			return docket.Mutation{}, errHardDecide
		}, errHardDecide, false},
		{"unknown status", hardRunHeld, hardAcme, hardDecide(docket.Mutation{Status: "paused"}), docket.ErrInvalidArgument, false},
		{"wake time on a terminal status", hardRunHeld, hardAcme, hardDecide(docket.Mutation{Status: docket.StatusDone, WakeAt: time.Now()}), docket.ErrInvalidArgument, false},
		{"wake time on waiting", hardRunWaiting, hardAcme, hardDecide(docket.Mutation{Status: docket.StatusWaiting, WakeAt: time.Now()}), docket.ErrInvalidArgument, false},
		{"invalid JSON state", hardRunWaiting, hardAcme, hardDecide(docket.Mutation{Status: docket.StatusRunning, State: json.RawMessage(`{`)}), docket.ErrInvalidArgument, false},
		{"oversized state", hardRunWaiting, hardAcme, hardDecide(docket.Mutation{Status: docket.StatusRunning, State: hardHugeState}), docket.ErrInvalidArgument, false},
		{"reviving a finished run", hardRunFinished, hardAcme, hardDecide(docket.Mutation{Status: docket.StatusRunning}), docket.ErrInvalidTransition, false},
		{"re-finishing a finished run", hardRunFinished, hardAcme, hardDecide(docket.Mutation{Status: docket.StatusFailed}), docket.ErrInvalidTransition, false},
		{"running a poisoned run", hardRunPoisoned, hardAcme, hardDecide(docket.Mutation{Status: docket.StatusRunning}), docket.ErrInvalidTransition, false},
		{"parking a poisoned run", hardRunPoisoned, hardAcme, hardDecide(docket.Mutation{Status: docket.StatusWaiting}), docket.ErrInvalidTransition, false},
		// The zero Mutation is a documented no-op.
		{"zero Mutation", hardRunHeld, hardAcme, hardDecide(docket.Mutation{}), nil, false},
	}
	var cases []hardInputCase
	for _, b := range bad {
		cases = append(cases, hardInputCase{name: "MutateRun " + b.name, want: hardWants(b.want), local: b.local,
			call: func(ctx context.Context, env *hardInputEnv) error {
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
		{"unknown run", hardUnknownRun, docket.ErrNotFound, false},
		{"empty run id", "", docket.ErrInvalidArgument, true},
		{"run id not UTF-8", hardBadUTF8, docket.ErrInvalidArgument, true},
		{"finished run (no-op)", hardRunFinished, nil, false},
	}
	for _, b := range cancels {
		cases = append(cases, hardInputCase{name: "Cancel " + b.name, want: hardWants(b.want), local: b.local,
			call: func(ctx context.Context, env *hardInputEnv) error {
				res, err := env.client.Cancel(ctx, hardAcme, b.runID)
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
		{"healthy claimed run", hardAcme, hardRunHeld, docket.ErrInvalidTransition, false},
		{"finished run", hardAcme, hardRunFinished, docket.ErrInvalidTransition, false},
		{"waiting run", hardAcme, hardRunWaiting, docket.ErrInvalidTransition, false},
		{"unknown run", hardAcme, hardUnknownRun, docket.ErrNotFound, false},
		{"poisoned run under another tenant", docket.Tenant("globex"), hardRunPoisoned, docket.ErrNotFound, false},
		{"empty run id", hardAcme, "", docket.ErrInvalidArgument, true},
		{"tenantless scope", docket.Tenantless, hardRunPoisoned, docket.ErrTenantRequired, true},
	}
	for _, b := range retries {
		cases = append(cases, hardInputCase{name: "RetryPoisonedRun " + b.name, want: hardWants(b.want), local: b.local,
			call: func(ctx context.Context, env *hardInputEnv) error {
				_, err := env.client.RetryPoisonedRun(ctx, b.scope, b.runID)
				return err
			}})
	}
	return append(cases,
		hardInputCase{name: "MutateRun cancelled context", want: []error{context.Canceled}, local: true, cancelled: true,
			call: func(ctx context.Context, env *hardInputEnv) error {
				_, err := env.client.MutateRun(ctx, hardAcme, hardRunWaiting, hardDecide(docket.Mutation{Status: docket.StatusRunning}))
				return err
			}},
		hardInputCase{name: "RetryPoisonedRun cancelled context", want: []error{context.Canceled}, local: true, cancelled: true,
			call: func(ctx context.Context, env *hardInputEnv) error {
				_, err := env.client.RetryPoisonedRun(ctx, hardAcme, hardRunPoisoned)
				return err
			}},
	)
}
