package main

import (
	"context"
	"errors"
	"time"
)

// claimSetup describes one direct-claim measurement: a frozen backlog of
// Runs due now over Tenants, claimed by Claimers loops of demand Demand.
type claimSetup struct {
	Engine   engineName
	Runs     int
	Tenants  int
	Claimers int
	Demand   int
}

// measureClaims builds a fresh database for s, loads its backlog and runs
// the claim loops until the backlog is claimed or budget passes. TenantFair
// runs with caps high enough never to bind.
func measureClaims(ctx context.Context, c *cluster, s claimSetup, budget time.Duration) (loopResult, error) {
	conns := s.Claimers + 2
	if s.Engine == engineRiver {
		env, err := openRiver(ctx, c, conns)
		if err != nil {
			return loopResult{}, err
		}
		if err := loadRiverBacklog(ctx, env, s.Runs, s.Tenants); err != nil {
			return loopResult{}, errors.Join(err, env.close())
		}
		exec := env.driver.GetExecutor()
		claims := make([]claimFunc, s.Claimers)
		for i := range claims {
			claims[i] = riverClaim(exec, i, s.Demand)
		}
		res, err := runClaimLoops(ctx, c.cpu(), claims, s.Runs, budget)
		return res, errors.Join(err, env.close())
	}
	env, err := openDocket(ctx, c, s.Engine, uncappedCap, conns)
	if err != nil {
		return loopResult{}, err
	}
	if err := loadDocketBacklog(ctx, env, s.Runs, s.Tenants); err != nil {
		return loopResult{}, errors.Join(err, env.close())
	}
	claims := make([]claimFunc, s.Claimers)
	for i := range claims {
		claims[i] = docketClaim(env.client, s.Demand)
	}
	res, err := runClaimLoops(ctx, c.cpu(), claims, s.Runs, budget)
	return res, errors.Join(err, env.close())
}
