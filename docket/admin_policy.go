package docket

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// ClaimPolicyDefault is the singleton claim policy of a fairness domain.
type ClaimPolicyDefault struct {
	// AdmissionMode is the active engine: "legacy" or "tenant_fair".
	AdmissionMode string
	// MaxActiveRuns is the persisted default cap; 0 until initialized.
	MaxActiveRuns int
	// ConfiguredMaxActiveRuns is the cap last synchronized from application
	// configuration at startup; 0 until then.
	ConfiguredMaxActiveRuns int
	// ParkDormant reports whether the domain walks only its awake ring
	// (parked partitions); see docs/fairness-parked.md.
	ParkDormant bool
	// ConfiguredParkDormant is the ParkDormant last synchronized from
	// application configuration at startup (false until then).
	ConfiguredParkDormant bool
	// Rate is the domain's default admission rate, the rate of every scope
	// without its own (PutClaimPolicyRate); zero when there is none.
	Rate RateLimit
	// Paused reports a queue-wide pause (PauseDomain): no claim call of
	// either engine admits or leases anything until ResumeDomain.
	Paused bool
	// Version counts writes of the default, of ParkDormant, of Rate and of
	// Paused;
	// compare-and-set writes expect it.
	Version int64
	// Initialized reports whether a TenantFair start has persisted a default.
	Initialized bool
	// UpdatedAt is the time of the row's last write.
	UpdatedAt time.Time
}

// FetchClaimPolicyDefault returns the persisted default cap, its version, the
// active engine, the last configured cap and whether the policy has been
// initialized.
func (c *store) FetchClaimPolicyDefault(ctx context.Context) (ClaimPolicyDefault, error) {
	return timed(ctx, c.telemetry, opFetchClaimPolicyDefault, func() (ClaimPolicyDefault, error) {
		row, err := c.queries.GetClaimPolicy(ctx)
		if err != nil {
			return ClaimPolicyDefault{}, fmt.Errorf("docket: reading claim policy: %w", err)
		}
		return claimPolicyDefaultOf(row), nil
	})
}

// PutClaimPolicyDefault changes the persisted default cap at runtime and
// bumps its version by one. The configured cap is left alone, so restarting
// with unchanged configuration keeps this value; changing the configured cap
// overwrites it at the next start. Only an initialized policy has a default to
// change: before the first TenantFair start this fails with ErrNotInitialized.
// An invalid cap fails with ErrInvalidCap and a version mismatch with
// ErrStale; either way nothing is written.
func (c *store) PutClaimPolicyDefault(ctx context.Context, maxActiveRuns int, opts ClaimPolicyWriteOptions) (ClaimPolicyDefault, error) {
	return timed(ctx, c.telemetry, opPutClaimPolicyDefault, func() (ClaimPolicyDefault, error) {
		capValue, err := checkedCap(maxActiveRuns)
		if err != nil {
			return ClaimPolicyDefault{}, err
		}
		var written dbgen.DocketClaimPolicy
		err = c.writePolicy(ctx, opts, func(p dbgen.DocketClaimPolicy) error {
			if p.InitializedAt == nil {
				return fmt.Errorf("%w: no TenantFair start has persisted a default yet", ErrNotInitialized)
			}
			return nil
		}, func(q *dbgen.Queries) error {
			written, err = q.PutClaimPolicyDefault(ctx, capValue)
			if err != nil {
				return fmt.Errorf("docket: writing claim policy default: %w", err)
			}
			return nil
		})
		if err != nil {
			return ClaimPolicyDefault{}, err
		}
		return claimPolicyDefaultOf(written), nil
	})
}

func claimPolicyDefaultOf(row dbgen.DocketClaimPolicy) ClaimPolicyDefault {
	return ClaimPolicyDefault{
		AdmissionMode:           row.AdmissionMode,
		MaxActiveRuns:           intOrZero(row.MaxActive),
		ConfiguredMaxActiveRuns: intOrZero(row.ConfiguredMaxActive),
		ParkDormant:             row.ParkDormant,
		ConfiguredParkDormant:   row.ConfiguredParkDormant,
		Rate:                    rateOf(row.RateLimit, row.RatePeriod, row.RateBurst),
		Paused:                  row.Paused,
		Version:                 row.PolicyVersion,
		Initialized:             row.InitializedAt != nil,
		UpdatedAt:               row.UpdatedAt,
	}
}

// writePolicy runs write as a compare-and-set on the policy version, in one
// transaction under the policy row's lock, which serializes it with startup
// and with every claim call: an invalid opts, a refusal of require (given
// the locked row; nil requires nothing) or a version mismatch (ErrStale)
// writes nothing.
func (c *store) writePolicy(ctx context.Context, opts ClaimPolicyWriteOptions, require func(dbgen.DocketClaimPolicy) error,
	write func(q *dbgen.Queries) error) error {
	if err := opts.validate(); err != nil {
		return err
	}
	return c.inTx(ctx, func(q *dbgen.Queries) error {
		current, err := q.LockClaimPolicy(ctx)
		if err != nil {
			return fmt.Errorf("docket: locking claim policy: %w", err)
		}
		if require != nil {
			if err := require(current); err != nil {
				return err
			}
		}
		if err := opts.check(current.PolicyVersion); err != nil {
			return err
		}
		return write(q)
	})
}

// requireInitialized refuses a policy no TenantFair start has initialized.
func requireInitialized(p dbgen.DocketClaimPolicy) error {
	if p.InitializedAt == nil {
		return fmt.Errorf("%w: no TenantFair start has persisted a policy yet", ErrNotInitialized)
	}
	return nil
}

// writePartition runs write as a compare-and-set on the partition version
// of key, under partition authority: in one transaction it creates a missing
// partition (with its ring position), locks it, which waits for a claim call
// visiting it so that a call sees the partition either before the write or
// after it, and checks opts. An invalid opts or a version mismatch
// (ErrStale) writes nothing; a stale write rolls back, taking a partition it
// just created along.
func (c *store) writePartition(ctx context.Context, key string, opts ClaimPolicyWriteOptions, write func(q *dbgen.Queries) error) error {
	if err := opts.validate(); err != nil {
		return err
	}
	return c.inTx(ctx, func(q *dbgen.Queries) error {
		if err := q.EnsureClaimPartition(ctx, key); err != nil {
			return fmt.Errorf("docket: creating claim partition: %w", err)
		}
		current, err := q.LockClaimPartition(ctx, key)
		if err != nil {
			return fmt.Errorf("docket: locking claim partition: %w", err)
		}
		if err := opts.check(current.PartitionVersion); err != nil {
			return err
		}
		return write(q)
	})
}

// intOrZero reads a nullable cap column; caps are never 0, so 0 means unset.
func intOrZero(v *int32) int {
	if v == nil {
		return 0
	}
	return int(*v)
}

// ClaimPolicyOverride is the cap state of one owner partition after a write.
type ClaimPolicyOverride struct {
	// Scope is the owner the partition belongs to.
	Scope Scope
	// MaxActiveRuns is the override; 0 means none, so the default applies.
	MaxActiveRuns int
	// Version counts override writes of the partition.
	Version int64
}

// PutClaimPolicyOverride sets the cap of one scope, overriding the default,
// and bumps the partition version by one. A scope without runs gets its
// partition (and with it a ring position) in the same transaction. Overrides
// are durable runtime state: startup never touches them. Lowering a cap below
// the scope's admitted count creates debt; no admission is revoked.
// An invalid cap (ErrInvalidCap), an invalid scope (ErrInvalidArgument,
// ErrTenantRequired) or a version mismatch (ErrStale) writes nothing.
func (c *store) PutClaimPolicyOverride(ctx context.Context, scope Scope, maxActiveRuns int, opts ClaimPolicyWriteOptions) (ClaimPolicyOverride, error) {
	return timed(ctx, c.telemetry, opPutClaimPolicyOverride, func() (ClaimPolicyOverride, error) {
		capValue, err := checkedCap(maxActiveRuns)
		if err != nil {
			return ClaimPolicyOverride{}, err
		}
		return c.writeOverride(ctx, scope, &capValue, opts)
	})
}

// ResetClaimPolicyOverride removes the cap override of one scope, so the
// default applies again, and bumps the partition version by one. Like
// PutClaimPolicyOverride it creates the partition if the scope has none, so
// every successful write moves the version. An invalid scope or a version
// mismatch writes nothing.
func (c *store) ResetClaimPolicyOverride(ctx context.Context, scope Scope, opts ClaimPolicyWriteOptions) (ClaimPolicyOverride, error) {
	return timed(ctx, c.telemetry, opResetClaimPolicyOverride, func() (ClaimPolicyOverride, error) {
		return c.writeOverride(ctx, scope, nil, opts)
	})
}

// writeOverride runs the compare-and-set under partition authority; a nil
// capValue resets the override.
func (c *store) writeOverride(ctx context.Context, scope Scope, capValue *int32, opts ClaimPolicyWriteOptions) (ClaimPolicyOverride, error) {
	key, err := c.scopeKey(scope)
	if err != nil {
		return ClaimPolicyOverride{}, err
	}
	var written dbgen.DocketClaimPartition
	err = c.writePartition(ctx, key, opts, func(q *dbgen.Queries) error {
		written, err = q.PutClaimPartitionOverride(ctx, dbgen.PutClaimPartitionOverrideParams{
			MaxActive: capValue,
			ScopeKey:  key,
		})
		if err != nil {
			return fmt.Errorf("docket: writing claim partition override: %w", err)
		}
		return nil
	})
	if err != nil {
		return ClaimPolicyOverride{}, err
	}
	return ClaimPolicyOverride{
		Scope:         scope,
		MaxActiveRuns: intOrZero(written.MaxActive),
		Version:       written.PartitionVersion,
	}, nil
}

// PutClaimPolicyParking turns parked partitions on or off for the whole
// fairness domain at runtime and bumps the policy version by one. The
// configured value is left alone, so restarting with unchanged configuration
// keeps this choice; changing the configured ParkDormant overwrites it at the
// next start. Turning parking off unparks every partition in the same
// transaction, so the next call walks the full ring. Turning it on parks
// every partition that is dormant now, after the policy write commits, in
// short batches that never wait for a lock (see parkDormantPartitions), so
// the walk starts over a small awake ring. Before the
// first TenantFair start this fails with ErrNotInitialized, and a version
// mismatch fails with ErrStale; either way nothing is written. Writing the
// current value is a write too (the version moves).
func (c *store) PutClaimPolicyParking(ctx context.Context, parkDormant bool, opts ClaimPolicyWriteOptions) (ClaimPolicyDefault, error) {
	return timed(ctx, c.telemetry, opPutClaimPolicyParking, func() (ClaimPolicyDefault, error) {
		var written dbgen.DocketClaimPolicy
		// The policy row lock keeps every claim call out until this commits,
		// so none parks after the unpark below.
		err := c.writePolicy(ctx, opts, requireInitialized, func(q *dbgen.Queries) error {
			var err error
			written, err = q.PutClaimPolicyParkDormant(ctx, parkDormant)
			if err != nil {
				return fmt.Errorf("docket: writing claim policy park_dormant: %w", err)
			}
			if !parkDormant {
				if _, err := q.UnparkAllPartitions(ctx); err != nil {
					return fmt.Errorf("docket: unparking partitions: %w", err)
				}
			}
			return nil
		})
		if err != nil {
			return ClaimPolicyDefault{}, err
		}
		if parkDormant {
			c.parkDormantPartitions(ctx)
		}
		return claimPolicyDefaultOf(written), nil
	})
}

// parkBatchSize is how many awake ring members one batch of
// parkDormantPartitions locks and checks: with two streams, switching on
// over 100,000 dormant partitions takes ten transactions of about a third
// of a second each on a 2-core server (1.5 to 1.9 s in all, against 1.6 to
// 2.3 s with batches of 5,000), short enough that an insert into a tenant
// whose schedule row a batch holds waits no longer than that.
const parkBatchSize = 10000

// parkStreams is how many batch streams parkDormantPartitions runs side by
// side, each over its own stretch of the ring: a batch is CPU-bound in the
// server (its rechecks and writes), so two streams use both cores of a
// small server, and a pool too small for them only serializes them.
const parkStreams = 2

// parkDormantPartitions parks every partition that is dormant now, walking
// the awake ring in ring order, one short transaction per batch: the
// first statement locks the batch's schedule rows without waiting (a row a
// writer or a claim call holds is skipped and left to the walk's park), the
// second re-checks dormancy in a snapshot taken after the lock and parks, so
// it follows the walk's two-step park. The ring is split into parkStreams
// stretches by position, each walked by its own stream; the stretches are
// disjoint, so no two batches touch one row. It runs after the policy write
// has committed, so claim calls are never held back by it, and the park
// statement parks nothing once the domain no longer walks parked. It reports
// how many partitions it parked. A failure stops a stream without undoing
// the switch: every partition it did not reach stays awake until a visit of
// the walk parks it, so the failure is logged rather than returned.
func (c *store) parkDormantPartitions(ctx context.Context) int64 {
	last, err := c.queries.LastAwakeRingPosition(ctx)
	if err != nil {
		c.logger.WarnContext(ctx, "docket: parking dormant partitions stopped; the walk parks the rest", "parked", 0, "error", err)
		return 0
	}
	var parked atomic.Int64
	var streams sync.WaitGroup
	for i := range parkStreams {
		from, upTo := last*int64(i)/parkStreams, last*int64(i+1)/parkStreams
		streams.Go(func() { parked.Add(c.parkStretch(ctx, from, upTo)) })
	}
	streams.Wait()
	return parked.Load()
}

// parkStretch is one stream of parkDormantPartitions: it parks the dormant
// partitions at ring positions in (after, upTo], batch by batch, and reports
// how many it parked.
func (c *store) parkStretch(ctx context.Context, after, upTo int64) int64 {
	var parked int64
	for {
		var locked []dbgen.LockAwakePartitionsBatchRow
		var n int64
		err := c.inTx(ctx, func(q *dbgen.Queries) error {
			var err error
			locked, err = q.LockAwakePartitionsBatch(ctx, dbgen.LockAwakePartitionsBatchParams{
				AfterPosition: after, UpToPosition: upTo, BatchSize: parkBatchSize})
			if err != nil {
				return fmt.Errorf("docket: locking awake partitions: %w", err)
			}
			if len(locked) == 0 {
				return nil
			}
			keys := make([]string, len(locked))
			for i, l := range locked {
				keys[i] = l.ScopeKey
			}
			first, last := locked[0].RingPosition, locked[len(locked)-1].RingPosition
			if first == nil || last == nil { // an identity column: never null
				return fmt.Errorf("docket: locking awake partitions: a schedule row without a ring position")
			}
			n, err = q.ParkDormantPartitionsBatch(ctx, dbgen.ParkDormantPartitionsBatchParams{
				ScopeKeys: keys, FirstPosition: *first, LastPosition: *last})
			if err != nil {
				return fmt.Errorf("docket: parking dormant partitions: %w", err)
			}
			return nil
		})
		if err != nil {
			c.logger.WarnContext(ctx, "docket: parking dormant partitions stopped; the walk parks the rest", "parked", parked, "error", err)
			return parked
		}
		if len(locked) == 0 {
			return parked
		}
		parked += n
		after = *locked[len(locked)-1].RingPosition
	}
}

// TenantPause is the pause state of one owner partition after a write.
type TenantPause struct {
	// Scope is the owner the partition belongs to.
	Scope Scope
	// Paused reports whether the partition is paused now.
	Paused bool
	// Version is the partition version after the write (the one cap
	// overrides move too).
	Version int64
}

// PauseTenant stops TenantFair from admitting or leasing any run of scope
// until ResumeTenant: each claim call still visits the partition in its ring
// order and refuses it (trace disposition "paused"), nothing of the scope is
// deleted, its claimed runs keep their holders, who commit as usual, and its
// queued and ready runs keep their order. Legacy does not read the flag. The
// write bumps the partition version by one and creates the partition (with
// its ring position) when the scope has none yet. Pausing a paused scope is a
// write too (the version moves). An invalid scope (ErrInvalidArgument,
// ErrTenantRequired) or a version mismatch (ErrStale) writes nothing.
func (c *store) PauseTenant(ctx context.Context, scope Scope, opts ClaimPolicyWriteOptions) (TenantPause, error) {
	return timed(ctx, c.telemetry, opPauseTenant, func() (TenantPause, error) {
		return c.writePaused(ctx, scope, true, opts)
	})
}

// ResumeTenant undoes PauseTenant: the next claim calls admit and lease the
// scope's runs again, in their order, and listening Workers are woken at
// commit so they claim them at once. Like PauseTenant it bumps the partition
// version, creates a missing partition, and writes nothing on an invalid
// scope or a version mismatch (ErrStale).
func (c *store) ResumeTenant(ctx context.Context, scope Scope, opts ClaimPolicyWriteOptions) (TenantPause, error) {
	return timed(ctx, c.telemetry, opResumeTenant, func() (TenantPause, error) {
		return c.writePaused(ctx, scope, false, opts)
	})
}

// writePaused runs the compare-and-set of the pause flag under partition
// authority, as writeOverride does for the cap.
func (c *store) writePaused(ctx context.Context, scope Scope, paused bool, opts ClaimPolicyWriteOptions) (TenantPause, error) {
	key, err := c.scopeKey(scope)
	if err != nil {
		return TenantPause{}, err
	}
	var written dbgen.DocketClaimPartition
	err = c.writePartition(ctx, key, opts, func(q *dbgen.Queries) error {
		written, err = q.PutClaimPartitionPaused(ctx, dbgen.PutClaimPartitionPausedParams{
			Paused:   paused,
			ScopeKey: key,
		})
		if err != nil {
			return fmt.Errorf("docket: writing claim partition pause: %w", err)
		}
		if !paused {
			// The scope's due runs were due all along: only the resume
			// makes them claimable, so Workers hear of it now.
			c.announceDue(ctx, q, time.Time{})
		}
		return nil
	})
	if err != nil {
		return TenantPause{}, err
	}
	return TenantPause{Scope: scope, Paused: written.Paused, Version: written.PartitionVersion}, nil
}

// PauseDomain pauses the whole domain (a queue-wide pause): every claim call,
// TenantFair or Legacy, returns nothing until ResumeDomain, so no run is
// admitted, leased or stolen, while the holders of claimed runs refresh,
// commit and release as usual. Nothing is deleted and every queue keeps its
// order. It holds beside a tenant's own pause (PauseTenant), and a call
// through the inactive engine is still refused as such first. The policy
// version moves by one, also when the domain is paused already; a version
// mismatch (ErrStale) writes nothing.
func (c *store) PauseDomain(ctx context.Context, opts ClaimPolicyWriteOptions) (ClaimPolicyDefault, error) {
	return timed(ctx, c.telemetry, opPauseDomain, func() (ClaimPolicyDefault, error) {
		return c.writeDomainPaused(ctx, true, opts)
	})
}

// ResumeDomain undoes PauseDomain: the next claim calls admit and lease
// again, and listening Workers are woken at commit. Like PauseDomain it
// moves the policy version and writes nothing on a version mismatch.
func (c *store) ResumeDomain(ctx context.Context, opts ClaimPolicyWriteOptions) (ClaimPolicyDefault, error) {
	return timed(ctx, c.telemetry, opResumeDomain, func() (ClaimPolicyDefault, error) {
		return c.writeDomainPaused(ctx, false, opts)
	})
}

// writeDomainPaused writes the domain's pause flag (writePolicy).
func (c *store) writeDomainPaused(ctx context.Context, paused bool, opts ClaimPolicyWriteOptions) (ClaimPolicyDefault, error) {
	var written dbgen.DocketClaimPolicy
	err := c.writePolicy(ctx, opts, nil, func(q *dbgen.Queries) error {
		var err error
		written, err = q.PutClaimPolicyPaused(ctx, paused)
		if err != nil {
			return fmt.Errorf("docket: writing the domain pause: %w", err)
		}
		if !paused {
			c.announceDue(ctx, q, time.Time{})
		}
		return nil
	})
	if err != nil {
		return ClaimPolicyDefault{}, err
	}
	return claimPolicyDefaultOf(written), nil
}
