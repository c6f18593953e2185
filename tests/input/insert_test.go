package input

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/docket"
)

// badRun is one invalid NewRun and the sentinel it must produce.
type badRun struct {
	name   string
	want   error
	local  bool
	mutate func(*docket.NewRun)
}

var badRuns = []badRun{
	{"tenantless", docket.ErrTenantRequired, true, func(r *docket.NewRun) { r.Scope = docket.Tenantless }},
	{"empty tenant", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.Scope = docket.Tenant("") }},
	{"oversized tenant", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.Scope = docket.Tenant(longID) }},
	{"tenant with NUL", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.Scope = docket.Tenant("ac\x00me") }},
	{"tenant with newline", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.Scope = docket.Tenant("acme\nforged log line") }},
	{"tenant with DEL", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.Scope = docket.Tenant("acme\x7f") }},
	{"tenant with C1 control", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.Scope = docket.Tenant("acme\u0085") }},
	{"tenant not UTF-8", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.Scope = docket.Tenant(badUTF8) }},
	{"oversized run id", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.RunID = longID }},
	{"blank run id", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.RunID = "   " }},
	{"blank graph hash", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.GraphHash = " " }},
	{"run id with NUL", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.RunID = "run\x00" }},
	{"run id with tab", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.RunID = "run\t1" }},
	{"run id not UTF-8", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.RunID = badUTF8 }},
	{"empty graph id", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.GraphID = "" }},
	{"oversized graph id", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.GraphID = longID }},
	{"graph id with escape", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.GraphID = "g\x1b[31m" }},
	{"empty graph hash", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.GraphHash = "" }},
	{"oversized graph hash", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.GraphHash = longID }},
	{"nil state", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.State = nil }},
	{"truncated JSON", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.State = json.RawMessage(`{"n":`) }},
	{"JSON with trailing garbage", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.State = json.RawMessage(`{} {}`) }},
	{"NaN", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.State = json.RawMessage(`NaN`) }},
	{"single-quoted JSON", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.State = json.RawMessage(`{'n':1}`) }},
	{"oversized state", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.State = hugeState }},
	{"state with NUL escape", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.State = json.RawMessage(`{"s":"a\u0000b"}`) }},
	{"state key with NUL escape", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.State = json.RawMessage(`{"a\u0000":1}`) }},
	{"state not UTF-8", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.State = json.RawMessage("{\"s\":\"\xff\"}") }},
	// Valid JSON that jsonb refuses: the database rejects it.
	{"state with a lone surrogate", docket.ErrInvalidArgument, false, func(r *docket.NewRun) { r.State = json.RawMessage(`{"s":"\ud800"}`) }},
	{"duplicate run id", docket.ErrDuplicateRun, false, func(r *docket.NewRun) { r.RunID = runHeld }},
	{"another tenant's run id", docket.ErrDuplicateRun, false, func(r *docket.NewRun) { r.RunID = runOther }},
}

func insertCases() []inputCase {
	var cases []inputCase
	for _, b := range badRuns {
		run := newRun("fresh-run")
		b.mutate(&run)
		cases = append(cases,
			inputCase{name: "InsertRun " + b.name, want: []error{b.want}, local: b.local,
				call: func(ctx context.Context, env *inputEnv) error {
					_, err := env.client.InsertRun(ctx, run)
					return err
				}},
			inputCase{name: "InsertRuns with one " + b.name, want: []error{b.want}, local: b.local,
				call: func(ctx context.Context, env *inputEnv) error {
					_, err := env.client.InsertRuns(ctx, []docket.NewRun{newRun("fresh-1"), run, newRun("fresh-2")})
					return err
				}},
		)
		if b.want != docket.ErrDuplicateRun {
			cases = append(cases, inputCase{name: "InsertRunTx " + b.name, want: []error{b.want}, local: b.local,
				call: func(ctx context.Context, env *inputEnv) error {
					_, err := env.client.InsertRunTx(ctx, env.begin(ctx, pgx.TxOptions{}), run)
					return err
				}})
		}
	}
	return append(cases,
		inputCase{name: "InsertRunTx duplicate leaves the transaction usable", want: []error{docket.ErrDuplicateRun},
			call: func(ctx context.Context, env *inputEnv) error {
				tx := env.begin(ctx, pgx.TxOptions{})
				_, err := env.client.InsertRunTx(ctx, tx, newRun(runHeld))
				if _, useErr := tx.Exec(ctx, "select 1"); useErr != nil {
					env.t.Fatalf("transaction unusable after a duplicate: %v", useErr)
				}
				return err
			}},
		inputCase{name: "InsertRunTx nil transaction", want: []error{docket.ErrInvalidArgument}, local: true,
			call: func(ctx context.Context, env *inputEnv) error {
				_, err := env.client.InsertRunTx(ctx, nil, newRun("fresh-run"))
				return err
			}},
		inputCase{name: "InsertRunsTx nil transaction", want: []error{docket.ErrInvalidArgument}, local: true,
			call: func(ctx context.Context, env *inputEnv) error {
				_, err := env.client.InsertRunsTx(ctx, nil, []docket.NewRun{newRun("fresh-run")})
				return err
			}},
		inputCase{name: "InsertRunsTx duplicate within the batch", want: []error{docket.ErrDuplicateRun}, local: true,
			call: func(ctx context.Context, env *inputEnv) error {
				_, err := env.client.InsertRunsTx(ctx, env.begin(ctx, pgx.TxOptions{}), []docket.NewRun{newRun("twin"), newRun("twin")})
				return err
			}},
		inputCase{name: "InsertRuns duplicate within the batch", want: []error{docket.ErrDuplicateRun}, local: true,
			call: func(ctx context.Context, env *inputEnv) error {
				_, err := env.client.InsertRuns(ctx, []docket.NewRun{newRun("twin"), newRun("twin")})
				return err
			}},
		inputCase{name: "InsertRuns empty batch", local: true,
			call: func(ctx context.Context, env *inputEnv) error {
				_, err := env.client.InsertRuns(ctx, nil)
				return err
			}},
		inputCase{name: "InsertRun cancelled context", want: []error{context.Canceled}, local: true, cancelled: true,
			call: func(ctx context.Context, env *inputEnv) error {
				_, err := env.client.InsertRun(ctx, newRun("fresh-run"))
				return err
			}},
		inputCase{name: "InsertRuns cancelled context", want: []error{context.Canceled}, local: true, cancelled: true,
			call: func(ctx context.Context, env *inputEnv) error {
				_, err := env.client.InsertRuns(ctx, []docket.NewRun{newRun("fresh-run")})
				return err
			}},
	)
}
