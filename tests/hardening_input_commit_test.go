package tests

import (
	"context"
	"encoding/json"
	"time"

	"github.com/docketrun/docket-go/docket"
)

// hardGoodCommit is a valid commit of the fixture lease that would finish it.
func hardGoodCommit(env *hardInputEnv) docket.CommitRequest {
	return docket.CommitRequest{
		Holder: env.lease.Holder(), ExpectedSeq: env.lease.CheckpointSeq, Step: 1,
		State: json.RawMessage(`{"n":2}`), CheckpointType: "step", Schedule: docket.ReleaseTerminal(docket.StatusDone),
	}
}

func hardCommitCases() []hardInputCase {
	bad := []struct {
		name   string
		want   error
		local  bool
		mutate func(*docket.CommitRequest)
	}{
		{"zero Schedule", docket.ErrInvalidArgument, true, func(r *docket.CommitRequest) { r.Schedule = docket.Schedule{} }},
		{"ReleaseAt zero time", docket.ErrInvalidArgument, true, func(r *docket.CommitRequest) { r.Schedule = docket.ReleaseAt(time.Time{}) }},
		{"ReleaseTerminal running", docket.ErrInvalidArgument, true, func(r *docket.CommitRequest) { r.Schedule = docket.ReleaseTerminal(docket.StatusRunning) }},
		{"ReleaseTerminal waiting", docket.ErrInvalidArgument, true, func(r *docket.CommitRequest) { r.Schedule = docket.ReleaseTerminal(docket.StatusWaiting) }},
		{"ReleaseTerminal bogus", docket.ErrInvalidArgument, true, func(r *docket.CommitRequest) { r.Schedule = docket.ReleaseTerminal("bogus") }},
		{"negative ExpectedSeq", docket.ErrInvalidArgument, true, func(r *docket.CommitRequest) { r.ExpectedSeq = -1 }},
		{"negative Step", docket.ErrInvalidArgument, true, func(r *docket.CommitRequest) { r.Step = -1 }},
		{"Step 2147483648", docket.ErrInvalidArgument, true, func(r *docket.CommitRequest) { r.Step = hardOverflow }},
		{"empty non-nil State", docket.ErrInvalidArgument, true, func(r *docket.CommitRequest) { r.State = json.RawMessage{} }},
		{"invalid JSON State", docket.ErrInvalidArgument, true, func(r *docket.CommitRequest) { r.State = json.RawMessage(`[1,`) }},
		{"oversized State", docket.ErrInvalidArgument, true, func(r *docket.CommitRequest) { r.State = hardHugeState }},
		{"State with NUL escape", docket.ErrInvalidArgument, true, func(r *docket.CommitRequest) { r.State = json.RawMessage(`"\u0000"`) }},
		{"CheckpointType with newline", docket.ErrInvalidArgument, true, func(r *docket.CommitRequest) { r.CheckpointType = "step\n2" }},
		{"oversized CheckpointType", docket.ErrInvalidArgument, true, func(r *docket.CommitRequest) { r.CheckpointType = hardLongID }},
		{"CheckpointType not UTF-8", docket.ErrInvalidArgument, true, func(r *docket.CommitRequest) { r.CheckpointType = hardBadUTF8 }},
		{"nil token", docket.ErrInvalidArgument, true, func(r *docket.CommitRequest) { r.Holder.Token = [16]byte{} }},
		{"tenantless scope", docket.ErrTenantRequired, true, func(r *docket.CommitRequest) { r.Holder.Scope = docket.Tenantless }},
		{"run id with NUL", docket.ErrInvalidArgument, true, func(r *docket.CommitRequest) { r.Holder.RunID = "\x00" }},
		{"stale ExpectedSeq", docket.ErrStaleFence, false, func(r *docket.CommitRequest) { r.ExpectedSeq++ }},
		{"wrong token", docket.ErrStaleFence, false, func(r *docket.CommitRequest) { r.Holder.Token[0] ^= 0xff }},
		{"lease token on a finished run", docket.ErrStaleFence, false, func(r *docket.CommitRequest) { r.Holder.RunID = hardRunFinished }},
		{"unknown run", docket.ErrNotFound, false, func(r *docket.CommitRequest) { r.Holder.RunID = hardUnknownRun }},
		{"another tenant's scope", docket.ErrNotFound, false, func(r *docket.CommitRequest) { r.Holder.Scope = docket.Tenant("globex") }},
	}
	var cases []hardInputCase
	for _, b := range bad {
		cases = append(cases, hardInputCase{name: "Commit " + b.name, want: []error{b.want}, local: b.local,
			call: func(ctx context.Context, env *hardInputEnv) error {
				req := hardGoodCommit(env)
				b.mutate(&req)
				_, err := env.client.Commit(ctx, req)
				return err
			}})
	}
	return append(cases, hardInputCase{name: "Commit cancelled context", want: []error{context.Canceled}, local: true, cancelled: true,
		call: func(ctx context.Context, env *hardInputEnv) error {
			_, err := env.client.Commit(ctx, hardGoodCommit(env))
			return err
		}})
}

// hardGoodAbandon is a valid abandon of the fixture lease.
func hardGoodAbandon(env *hardInputEnv) docket.AbandonRequest {
	return docket.AbandonRequest{Holder: env.lease.Holder(), ExpectedSeq: env.lease.CheckpointSeq}
}

func hardAbandonCases() []hardInputCase {
	bad := []struct {
		name   string
		want   error
		local  bool
		mutate func(*docket.AbandonRequest)
	}{
		{"negative BackoffBase", docket.ErrInvalidArgument, true, func(r *docket.AbandonRequest) { r.BackoffBase = -time.Second }},
		{"negative BackoffCap", docket.ErrInvalidArgument, true, func(r *docket.AbandonRequest) { r.BackoffCap = -time.Second }},
		{"BackoffBase above BackoffCap", docket.ErrInvalidArgument, true, func(r *docket.AbandonRequest) {
			r.BackoffBase, r.BackoffCap = time.Hour, time.Second
		}},
		{"negative MaxAbandons", docket.ErrInvalidArgument, true, func(r *docket.AbandonRequest) { r.MaxAbandons = -1 }},
		{"MaxAbandons 2147483648", docket.ErrInvalidArgument, true, func(r *docket.AbandonRequest) { r.MaxAbandons = hardOverflow }},
		{"negative ExpectedSeq", docket.ErrInvalidArgument, true, func(r *docket.AbandonRequest) { r.ExpectedSeq = -1 }},
		{"nil token", docket.ErrInvalidArgument, true, func(r *docket.AbandonRequest) { r.Holder.Token = [16]byte{} }},
		{"empty tenant", docket.ErrInvalidArgument, true, func(r *docket.AbandonRequest) { r.Holder.Scope = docket.Tenant("") }},
		{"unknown run", docket.ErrNotFound, false, func(r *docket.AbandonRequest) { r.Holder.RunID = hardUnknownRun }},
		// A stale holder gets AbandonStale without an error.
		{"stale ExpectedSeq", nil, false, func(r *docket.AbandonRequest) { r.ExpectedSeq++ }},
		{"wrong token", nil, false, func(r *docket.AbandonRequest) { r.Holder.Token[15] ^= 0xff }},
	}
	var cases []hardInputCase
	for _, b := range bad {
		cases = append(cases, hardInputCase{name: "AbandonClaim " + b.name, want: hardWants(b.want), local: b.local,
			call: func(ctx context.Context, env *hardInputEnv) error {
				req := hardGoodAbandon(env)
				b.mutate(&req)
				res, err := env.client.AbandonClaim(ctx, req)
				if err == nil && res.Outcome != docket.AbandonStale {
					env.t.Fatalf("abandon outcome %q, want %q", res.Outcome, docket.AbandonStale)
				}
				return err
			}})
	}
	return append(cases, hardInputCase{name: "AbandonClaim cancelled context", want: []error{context.Canceled}, local: true, cancelled: true,
		call: func(ctx context.Context, env *hardInputEnv) error {
			_, err := env.client.AbandonClaim(ctx, hardGoodAbandon(env))
			return err
		}})
}
