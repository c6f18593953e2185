package input

import (
	"context"
	"encoding/json"
	"time"

	"github.com/docketrun/docket-go/docket"
)

// goodCommit is a valid commit of the fixture lease that would finish it.
func goodCommit(env *inputEnv) docket.CommitRequest {
	return docket.CommitRequest{
		Holder: env.lease.Holder(), ExpectedSeq: env.lease.CheckpointSeq, Step: 1,
		State: json.RawMessage(`{"n":2}`), CheckpointType: "step", Disposition: docket.ReleaseTerminal(docket.StatusDone),
	}
}

func commitCases() []inputCase {
	bad := []struct {
		name   string
		want   error
		local  bool
		mutate func(*docket.CommitRequest)
	}{
		{"zero Schedule", docket.ErrInvalidArgument, true, func(r *docket.CommitRequest) { r.Disposition = docket.Disposition{} }},
		{"ReleaseAt zero time", docket.ErrInvalidArgument, true, func(r *docket.CommitRequest) { r.Disposition = docket.ReleaseAt(time.Time{}) }},
		{"ReleaseTerminal running", docket.ErrInvalidArgument, true, func(r *docket.CommitRequest) { r.Disposition = docket.ReleaseTerminal(docket.StatusRunning) }},
		{"ReleaseTerminal waiting", docket.ErrInvalidArgument, true, func(r *docket.CommitRequest) { r.Disposition = docket.ReleaseTerminal(docket.StatusWaiting) }},
		{"ReleaseTerminal bogus", docket.ErrInvalidArgument, true, func(r *docket.CommitRequest) { r.Disposition = docket.ReleaseTerminal("bogus") }},
		{"negative ExpectedSeq", docket.ErrInvalidArgument, true, func(r *docket.CommitRequest) { r.ExpectedSeq = -1 }},
		{"negative Step", docket.ErrInvalidArgument, true, func(r *docket.CommitRequest) { r.Step = -1 }},
		{"Step 2147483648", docket.ErrInvalidArgument, true, func(r *docket.CommitRequest) { r.Step = overflow }},
		{"empty non-nil State", docket.ErrInvalidArgument, true, func(r *docket.CommitRequest) { r.State = json.RawMessage{} }},
		{"invalid JSON State", docket.ErrInvalidArgument, true, func(r *docket.CommitRequest) { r.State = json.RawMessage(`[1,`) }},
		{"oversized State", docket.ErrInvalidArgument, true, func(r *docket.CommitRequest) { r.State = hugeState }},
		{"State with NUL escape", docket.ErrInvalidArgument, true, func(r *docket.CommitRequest) { r.State = json.RawMessage(`"\u0000"`) }},
		{"CheckpointType with newline", docket.ErrInvalidArgument, true, func(r *docket.CommitRequest) { r.CheckpointType = "step\n2" }},
		{"oversized CheckpointType", docket.ErrInvalidArgument, true, func(r *docket.CommitRequest) { r.CheckpointType = longID }},
		{"CheckpointType not UTF-8", docket.ErrInvalidArgument, true, func(r *docket.CommitRequest) { r.CheckpointType = badUTF8 }},
		{"nil token", docket.ErrInvalidArgument, true, func(r *docket.CommitRequest) { r.Holder.Token = [16]byte{} }},
		{"tenantless scope", docket.ErrTenantRequired, true, func(r *docket.CommitRequest) { r.Holder.Scope = docket.Tenantless }},
		{"run id with NUL", docket.ErrInvalidArgument, true, func(r *docket.CommitRequest) { r.Holder.RunID = "\x00" }},
		{"stale ExpectedSeq", docket.ErrStaleFence, false, func(r *docket.CommitRequest) { r.ExpectedSeq++ }},
		{"wrong token", docket.ErrStaleFence, false, func(r *docket.CommitRequest) { r.Holder.Token[0] ^= 0xff }},
		{"lease token on a finished run", docket.ErrStaleFence, false, func(r *docket.CommitRequest) { r.Holder.RunID = runFinished }},
		{"unknown run", docket.ErrNotFound, false, func(r *docket.CommitRequest) { r.Holder.RunID = unknownRun }},
		{"another tenant's scope", docket.ErrNotFound, false, func(r *docket.CommitRequest) { r.Holder.Scope = docket.Tenant("globex") }},
	}
	var cases []inputCase
	for _, b := range bad {
		cases = append(cases, inputCase{name: "Commit " + b.name, want: []error{b.want}, local: b.local,
			call: func(ctx context.Context, env *inputEnv) error {
				req := goodCommit(env)
				b.mutate(&req)
				_, err := env.client.Commit(ctx, req)
				return err
			}})
	}
	return append(cases, inputCase{name: "Commit cancelled context", want: []error{context.Canceled}, local: true, cancelled: true,
		call: func(ctx context.Context, env *inputEnv) error {
			_, err := env.client.Commit(ctx, goodCommit(env))
			return err
		}})
}

// goodAbandon is a valid abandon of the fixture lease.
func goodAbandon(env *inputEnv) docket.AbandonRequest {
	return docket.AbandonRequest{Holder: env.lease.Holder(), ExpectedSeq: env.lease.CheckpointSeq}
}

func abandonCases() []inputCase {
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
		{"MaxAbandons 2147483648", docket.ErrInvalidArgument, true, func(r *docket.AbandonRequest) { r.MaxAbandons = overflow }},
		{"negative ExpectedSeq", docket.ErrInvalidArgument, true, func(r *docket.AbandonRequest) { r.ExpectedSeq = -1 }},
		{"nil token", docket.ErrInvalidArgument, true, func(r *docket.AbandonRequest) { r.Holder.Token = [16]byte{} }},
		{"empty tenant", docket.ErrInvalidArgument, true, func(r *docket.AbandonRequest) { r.Holder.Scope = docket.Tenant("") }},
		{"unknown run", docket.ErrNotFound, false, func(r *docket.AbandonRequest) { r.Holder.RunID = unknownRun }},
		// A stale holder gets AbandonStale without an error.
		{"stale ExpectedSeq", nil, false, func(r *docket.AbandonRequest) { r.ExpectedSeq++ }},
		{"wrong token", nil, false, func(r *docket.AbandonRequest) { r.Holder.Token[15] ^= 0xff }},
	}
	var cases []inputCase
	for _, b := range bad {
		cases = append(cases, inputCase{name: "AbandonClaim " + b.name, want: wants(b.want), local: b.local,
			call: func(ctx context.Context, env *inputEnv) error {
				req := goodAbandon(env)
				b.mutate(&req)
				res, err := env.client.AbandonClaim(ctx, req)
				if err == nil && res.Outcome != docket.AbandonStale {
					env.t.Fatalf("abandon outcome %q, want %q", res.Outcome, docket.AbandonStale)
				}
				return err
			}})
	}
	return append(cases, inputCase{name: "AbandonClaim cancelled context", want: []error{context.Canceled}, local: true, cancelled: true,
		call: func(ctx context.Context, env *inputEnv) error {
			_, err := env.client.AbandonClaim(ctx, goodAbandon(env))
			return err
		}})
}
