package docket

import (
	"context"
	"fmt"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// commitApplied reports whether the run's row shows req as its latest
// commit (see the CommitApplied query for what identifies it). A worker asks
// when req met its fence after an earlier attempt of it failed without an
// answer: the earlier attempt may have committed.
func (c *Client) commitApplied(ctx context.Context, req CommitRequest) (bool, error) {
	scopeKey, err := c.holderKey(req.Holder)
	if err != nil {
		return false, err
	}
	params := dbgen.CommitAppliedParams{
		ScopeKey:    scopeKey,
		RunID:       req.Holder.RunID,
		ExpectedSeq: req.ExpectedSeq,
		Step:        int32(req.Step),
		Schedule:    req.Disposition.kind,
		ClaimToken:  req.Holder.Token,
		Status:      string(req.Disposition.status),
	}
	if req.CheckpointType != "" {
		params.CheckpointType = &req.CheckpointType
	}
	if req.State != nil {
		state := string(req.State)
		params.State = &state
	}
	applied, err := c.queries.CommitApplied(ctx, params)
	if err != nil {
		return false, fmt.Errorf("docket: checking whether a commit was applied: %w", err)
	}
	return applied, nil
}
