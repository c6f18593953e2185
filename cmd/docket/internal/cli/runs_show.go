package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/docketrun/docket-go/docket"
)

// runView is one run as "runs show" prints it: the public view plus the
// scheduling view, token-free. The two are read one after the other, not in
// one snapshot.
type runView struct {
	RunID                string          `json:"run_id"`
	Scope                string          `json:"scope"`
	GraphID              string          `json:"graph_id"`
	GraphHash            string          `json:"graph_hash"`
	Status               string          `json:"status"`
	Phase                string          `json:"phase"`
	Step                 int             `json:"step"`
	CheckpointSeq        int64           `json:"checkpoint_seq"`
	LatestCheckpointType string          `json:"latest_checkpoint_type"`
	ClaimAttempts        int             `json:"claim_attempts"`
	ClaimAbandons        int             `json:"claim_abandons"`
	Attempt              int             `json:"attempt"`
	Errors               []runErrorView  `json:"errors"`
	Claimed              bool            `json:"claimed"`
	ClaimedAt            *string         `json:"claimed_at"`
	WakeAt               *string         `json:"wake_at"`
	PoisonedAt           *string         `json:"poisoned_at"`
	PoisonReason         string          `json:"poison_reason"`
	AdmissionState       string          `json:"admission_state"`
	AdmittedAt           *string         `json:"admitted_at"`
	StartedAt            string          `json:"started_at"`
	UpdatedAt            string          `json:"updated_at"`
	FinishedAt           *string         `json:"finished_at"`
	UniqueKey            string          `json:"unique_key"`
	UniqueBucket         *string         `json:"unique_bucket"`
	State                json.RawMessage `json:"state"`
}

// runErrorView is one entry of a run's error history as "runs show" prints
// it.
type runErrorView struct {
	Attempt int    `json:"attempt"`
	At      string `json:"at"`
	Kind    string `json:"kind"`
	Error   string `json:"error"`
}

func runsShow(ctx context.Context, admin *docket.Admin, a runsArgs, out output) error {
	r, err := admin.FetchRun(ctx, a.scope, a.runID)
	if err != nil {
		return err
	}
	i, err := admin.InspectRun(ctx, a.scope, a.runID)
	if err != nil {
		return err
	}
	v := runView{
		RunID: r.RunID, Scope: r.Scope.String(), GraphID: r.GraphID, GraphHash: r.GraphHash,
		Status: string(r.Status), Phase: string(r.Phase), Step: r.Step, CheckpointSeq: r.CheckpointSeq,
		LatestCheckpointType: r.LatestCheckpointType, ClaimAttempts: r.ClaimAttempts,
		ClaimAbandons: r.ClaimAbandons, Claimed: r.Claimed(), ClaimedAt: optionalTime(r.ClaimedAt),
		WakeAt: optionalTime(r.WakeAt), PoisonedAt: optionalTime(r.PoisonedAt), PoisonReason: r.PoisonReason,
		AdmissionState: string(i.State), AdmittedAt: optionalTime(i.AdmittedAt),
		StartedAt: timeText(r.StartedAt), UpdatedAt: timeText(r.UpdatedAt), FinishedAt: optionalTime(r.FinishedAt),
		UniqueKey: r.UniqueKey, UniqueBucket: optionalTime(r.UniqueBucket),
		State: r.State, Attempt: r.Attempt, Errors: []runErrorView{},
	}
	for _, e := range r.Errors {
		v.Errors = append(v.Errors, runErrorView{Attempt: e.Attempt, At: timeText(e.At), Kind: e.Kind, Error: e.Error})
	}
	if a.json {
		if err := json.NewEncoder(out.stdout).Encode(v); err != nil {
			return fmt.Errorf("write run: %w", err)
		}
		return nil
	}
	printRunView(out, v)
	return nil
}

func printRunView(out output, v runView) {
	out.field("scope", v.Scope)
	out.field("run_id", v.RunID)
	out.field("graph_id", v.GraphID)
	out.field("graph_hash", v.GraphHash)
	out.field("status", v.Status)
	out.field("phase", v.Phase)
	out.field("step", v.Step)
	out.field("checkpoint_seq", v.CheckpointSeq)
	out.field("latest_checkpoint_type", orNone(&v.LatestCheckpointType))
	out.field("claim_attempts", v.ClaimAttempts)
	out.field("claim_abandons", v.ClaimAbandons)
	out.field("attempt", v.Attempt)
	out.field("errors", len(v.Errors))
	out.field("claimed", yesNo(v.Claimed))
	out.field("claimed_at", orNone(v.ClaimedAt))
	out.field("wake_at", orNone(v.WakeAt))
	out.field("poisoned_at", orNone(v.PoisonedAt))
	out.field("poison_reason", orNone(&v.PoisonReason))
	out.field("admission_state", v.AdmissionState)
	out.field("admitted_at", orNone(v.AdmittedAt))
	out.field("started_at", v.StartedAt)
	out.field("updated_at", v.UpdatedAt)
	out.field("finished_at", orNone(v.FinishedAt))
	out.field("unique_key", orNone(&v.UniqueKey))
	out.field("unique_bucket", orNone(v.UniqueBucket))
	out.field("state", string(v.State))
	// One line per entry, oldest first; the text is quoted so an error
	// that spans lines still prints on one.
	for _, e := range v.Errors {
		out.field("error", fmt.Sprintf("attempt %d at %s %s %s", e.Attempt, e.At, e.Kind, strconv.Quote(e.Error)))
	}
}

// orNone shows an absent or empty value as "none".
func orNone(s *string) string {
	if s == nil || *s == "" {
		return "none"
	}
	return *s
}
