package main

import (
	"context"
	"errors"
)

// runProfile profiles TenantFair claim calls; see profile_report.go.
func runProfile(ctx context.Context, c *cluster, o options, p *progress) error {
	return errors.New("profile: not implemented yet")
}
