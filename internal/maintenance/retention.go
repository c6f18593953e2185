package maintenance

import (
	"context"
	"log/slog"
	"time"

	"github.com/docketrun/docket-go/internal/startstop"
)

// Keep is how long runs that finished in one status are kept.
type Keep struct {
	// Status is the finished status, as the store names it.
	Status string
	// For is the age, by the cleaner's clock, past which such a run goes.
	For time.Duration
}

// RetentionConfig is what a RetentionCleaner deletes, how often, through
// what and whom it tells. Every, Keep and DeleteFinished are required.
type RetentionConfig struct {
	// Every is the pause between the starts of two passes, counted by a
	// ticker made when the cleaner starts; the first pass runs at once.
	Every time.Duration
	// Keep lists the statuses a pass deletes, in the order it takes them.
	Keep []Keep
	// BatchSize is handed to DeleteFinished unchanged.
	BatchSize int
	// DeleteFinished deletes the runs that finished in status before
	// cutoff, batch runs per transaction, and returns how many it deleted,
	// also when it fails part way.
	DeleteFinished func(ctx context.Context, status string, cutoff time.Time, batch int) (int64, error)
	// Clock is the time source; nil is WallClock.
	Clock Clock
	// Logger receives a debug record per pass and a warning per failed
	// one; nil discards them.
	Logger *slog.Logger
	// OnPass, when set, hears of each pass that ended: the runs it deleted
	// and its error (nil on success). A pass cut short by the cleaner's
	// stop is not reported.
	OnPass func(deleted int64, err error)
}

// RetentionCleaner deletes old finished runs: a pass when it starts, then
// one per tick of RetentionConfig.Every, until it stops.
type RetentionCleaner struct {
	startstop.Base
	cfg RetentionConfig
}

// NewRetentionCleaner returns the cleaner of cfg, not yet started.
func NewRetentionCleaner(cfg RetentionConfig) *RetentionCleaner {
	if cfg.Clock == nil {
		cfg.Clock = WallClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &RetentionCleaner{cfg: cfg}
}

// Start runs the cleaner until ctx ends or Stop is called (see
// startstop.Service).
func (c *RetentionCleaner) Start(ctx context.Context) error { return c.StartFunc(ctx, c.run) }

// run is the cleaner's goroutine.
func (c *RetentionCleaner) run(ctx context.Context) {
	ticker := c.cfg.Clock.NewTicker(c.cfg.Every)
	defer ticker.Stop()
	for {
		c.pass(ctx)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
		}
	}
}

// pass deletes, for each status of Keep in turn, the runs that finished
// longer ago than it keeps them, every cutoff measured from the pass's
// start. The first failure ends the pass; it is logged and reported, and
// the next pass tries again.
func (c *RetentionCleaner) pass(ctx context.Context) {
	start := c.cfg.Clock.Now()
	var deleted int64
	var err error
	for _, keep := range c.cfg.Keep {
		var n int64
		n, err = c.cfg.DeleteFinished(ctx, keep.Status, start.Add(-keep.For), c.cfg.BatchSize)
		deleted += n
		if err != nil {
			break
		}
	}
	if err != nil && ctx.Err() != nil {
		return
	}
	if err != nil {
		c.cfg.Logger.WarnContext(ctx, "docket worker retention pass failed; trying again at the next pass",
			"deleted", deleted, "error", err.Error())
	} else {
		c.cfg.Logger.DebugContext(ctx, "docket worker retention pass", "deleted", deleted)
	}
	if c.cfg.OnPass != nil {
		c.cfg.OnPass(deleted, err)
	}
}
