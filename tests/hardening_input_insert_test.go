package tests

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/docket"
)

// hardBadRun is one invalid NewRun and the sentinel it must produce.
type hardBadRun struct {
	name   string
	want   error
	local  bool
	mutate func(*docket.NewRun)
}

var hardBadRuns = []hardBadRun{
	{"tenantless", docket.ErrTenantRequired, true, func(r *docket.NewRun) { r.Scope = docket.Tenantless }},
	{"empty tenant", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.Scope = docket.Tenant("") }},
	{"oversized tenant", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.Scope = docket.Tenant(hardLongID) }},
	{"tenant with NUL", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.Scope = docket.Tenant("ac\x00me") }},
	{"tenant with newline", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.Scope = docket.Tenant("acme\nforged log line") }},
	{"tenant with DEL", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.Scope = docket.Tenant("acme\x7f") }},
	{"tenant with C1 control", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.Scope = docket.Tenant("acme\u0085") }},
	{"tenant not UTF-8", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.Scope = docket.Tenant(hardBadUTF8) }},
	{"oversized run id", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.RunID = hardLongID }},
	{"run id with NUL", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.RunID = "run\x00" }},
	{"run id with tab", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.RunID = "run\t1" }},
	{"run id not UTF-8", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.RunID = hardBadUTF8 }},
	{"empty graph id", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.GraphID = "" }},
	{"oversized graph id", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.GraphID = hardLongID }},
	{"graph id with escape", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.GraphID = "g\x1b[31m" }},
	{"empty graph hash", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.GraphHash = "" }},
	{"oversized graph hash", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.GraphHash = hardLongID }},
	{"nil state", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.State = nil }},
	{"truncated JSON", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.State = json.RawMessage(`{"n":`) }},
	{"JSON with trailing garbage", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.State = json.RawMessage(`{} {}`) }},
	{"NaN", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.State = json.RawMessage(`NaN`) }},
	{"single-quoted JSON", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.State = json.RawMessage(`{'n':1}`) }},
	{"oversized state", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.State = hardHugeState }},
	{"state with NUL escape", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.State = json.RawMessage(`{"s":"a\u0000b"}`) }},
	{"state key with NUL escape", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.State = json.RawMessage(`{"a\u0000":1}`) }},
	{"state not UTF-8", docket.ErrInvalidArgument, true, func(r *docket.NewRun) { r.State = json.RawMessage("{\"s\":\"\xff\"}") }},
	// Valid JSON that jsonb refuses: the database rejects it.
	{"state with a lone surrogate", docket.ErrInvalidArgument, false, func(r *docket.NewRun) { r.State = json.RawMessage(`{"s":"\ud800"}`) }},
	{"duplicate run id", docket.ErrDuplicateRun, false, func(r *docket.NewRun) { r.RunID = hardRunHeld }},
	{"another tenant's run id", docket.ErrDuplicateRun, false, func(r *docket.NewRun) { r.RunID = hardRunOther }},
}

func hardInsertCases() []hardInputCase {
	var cases []hardInputCase
	for _, b := range hardBadRuns {
		run := hardNewRun("fresh-run")
		b.mutate(&run)
		cases = append(cases,
			hardInputCase{name: "InsertRun " + b.name, want: []error{b.want}, local: b.local,
				call: func(ctx context.Context, env *hardInputEnv) error {
					_, err := env.client.InsertRun(ctx, run)
					return err
				}},
			hardInputCase{name: "InsertRuns with one " + b.name, want: []error{b.want}, local: b.local,
				call: func(ctx context.Context, env *hardInputEnv) error {
					_, err := env.client.InsertRuns(ctx, []docket.NewRun{hardNewRun("fresh-1"), run, hardNewRun("fresh-2")})
					return err
				}},
		)
		if b.want != docket.ErrDuplicateRun {
			cases = append(cases, hardInputCase{name: "InsertRunTx " + b.name, want: []error{b.want}, local: b.local,
				call: func(ctx context.Context, env *hardInputEnv) error {
					_, err := env.client.InsertRunTx(ctx, env.begin(ctx, pgx.TxOptions{}), run)
					return err
				}})
		}
	}
	return append(cases,
		hardInputCase{name: "InsertRunTx duplicate leaves the transaction usable", want: []error{docket.ErrDuplicateRun},
			call: func(ctx context.Context, env *hardInputEnv) error {
				tx := env.begin(ctx, pgx.TxOptions{})
				_, err := env.client.InsertRunTx(ctx, tx, hardNewRun(hardRunHeld))
				if _, useErr := tx.Exec(ctx, "select 1"); useErr != nil {
					env.t.Fatalf("transaction unusable after a duplicate: %v", useErr)
				}
				return err
			}},
		hardInputCase{name: "InsertRunTx nil transaction", want: []error{docket.ErrInvalidArgument}, local: true,
			call: func(ctx context.Context, env *hardInputEnv) error {
				_, err := env.client.InsertRunTx(ctx, nil, hardNewRun("fresh-run"))
				return err
			}},
		hardInputCase{name: "InsertRunsTx nil transaction", want: []error{docket.ErrInvalidArgument}, local: true,
			call: func(ctx context.Context, env *hardInputEnv) error {
				_, err := env.client.InsertRunsTx(ctx, nil, []docket.NewRun{hardNewRun("fresh-run")})
				return err
			}},
		hardInputCase{name: "InsertRunsTx duplicate within the batch", want: []error{docket.ErrDuplicateRun},
			call: func(ctx context.Context, env *hardInputEnv) error {
				_, err := env.client.InsertRunsTx(ctx, env.begin(ctx, pgx.TxOptions{}), []docket.NewRun{hardNewRun("twin"), hardNewRun("twin")})
				return err
			}},
		hardInputCase{name: "InsertRuns duplicate within the batch", want: []error{docket.ErrDuplicateRun},
			call: func(ctx context.Context, env *hardInputEnv) error {
				_, err := env.client.InsertRuns(ctx, []docket.NewRun{hardNewRun("twin"), hardNewRun("twin")})
				return err
			}},
		hardInputCase{name: "InsertRuns empty batch", local: true,
			call: func(ctx context.Context, env *hardInputEnv) error {
				_, err := env.client.InsertRuns(ctx, nil)
				return err
			}},
		hardInputCase{name: "InsertRun cancelled context", want: []error{context.Canceled}, local: true, cancelled: true,
			call: func(ctx context.Context, env *hardInputEnv) error {
				_, err := env.client.InsertRun(ctx, hardNewRun("fresh-run"))
				return err
			}},
		hardInputCase{name: "InsertRuns cancelled context", want: []error{context.Canceled}, local: true, cancelled: true,
			call: func(ctx context.Context, env *hardInputEnv) error {
				_, err := env.client.InsertRuns(ctx, []docket.NewRun{hardNewRun("fresh-run")})
				return err
			}},
	)
}
