package docket

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// MissedTicks is what a schedule does with the ticks that came due while no
// Worker took them (everything was down, or the schedule's Workers were
// busy for longer than a tick).
type MissedTicks string

// The missed-tick policies.
const (
	// MissedSkip, the default, inserts one run for the most recent due tick
	// only and continues from the first tick after the taker's clock.
	MissedSkip MissedTicks = "skip"
	// MissedAll inserts one run per due tick, oldest first, up to
	// MaxMissedTicks in one take; the due ticks beyond those are skipped and
	// the schedule continues from the first tick after the taker's clock.
	MissedAll MissedTicks = "all"
)

// MaxMissedTicks bounds the runs one take of a MissedAll schedule inserts.
const MaxMissedTicks = 100

// MaxScheduleNameBytes is the longest schedule name accepted, in bytes.
const MaxScheduleNameBytes = 100

// NewSchedule describes a schedule to add: exactly one of Cron and Every.
type NewSchedule struct {
	// Scope owns the schedule and every run it inserts; Tenantless is
	// refused under TenantRequired.
	Scope Scope
	// Name identifies the schedule in its scope: the identifier rules of
	// run ids, at most MaxScheduleNameBytes, without "/". The scope's
	// tenant id and the name together must leave room for the tick's run
	// id (see ScheduleRunID).
	Name string
	// GraphID, GraphHash and State are those of every run a tick inserts,
	// with NewRun's rules: all three are required. A nil State is
	// ErrInvalidArgument, as for NewRun (json.RawMessage(`{}`) is the empty
	// document); "docket schedules add" requires --state by the same rule.
	GraphID   string
	GraphHash string
	State     json.RawMessage
	// Cron is a five-field cron expression or descriptor (see ParseCron),
	// read in TimeZone.
	Cron string
	// Every is a fixed interval: whole seconds, at least one second. The
	// ticks are Start + k·Every for k = 1, 2, ...
	Every time.Duration
	// TimeZone is the IANA zone Cron is read in (time.LoadLocation);
	// empty means "UTC". Refused with Every, which no zone changes.
	TimeZone string
	// MissedTicks is the missed-tick policy; empty means MissedSkip.
	MissedTicks MissedTicks
	// Start anchors the ticks: an interval schedule ticks at Start +
	// k·Every, a cron schedule first fires at its first time after Start.
	// Zero means now by the caller's clock. It is truncated to the second.
	Start time.Time
}

// PeriodicSchedule is the stored view of a schedule of periodic runs.
type PeriodicSchedule struct {
	// Scope owns the schedule.
	Scope Scope
	// Name identifies it in its scope.
	Name string
	// GraphID, GraphHash and State are those of the runs it inserts.
	GraphID   string
	GraphHash string
	State     json.RawMessage
	// Cron is the cron expression, or "" for an interval schedule.
	Cron string
	// Every is the interval, or zero for a cron schedule.
	Every time.Duration
	// TimeZone is the zone Cron is read in.
	TimeZone string
	// MissedTicks is the missed-tick policy.
	MissedTicks MissedTicks
	// Paused reports a paused schedule; PausedAt is when it was paused.
	Paused   bool
	PausedAt *time.Time
	// NextTickAt is the next tick to take.
	NextTickAt time.Time
	// LastTickAt is the latest tick taken, nil before the first.
	LastTickAt *time.Time
	// CreatedAt and UpdatedAt are the database times of the insert and of
	// the latest write (an edit or a taken tick).
	CreatedAt time.Time
	UpdatedAt time.Time
	// Version counts operator edits (add, pause, resume) for
	// compare-and-set; taking ticks leaves it alone.
	Version int64
}

// ScheduleWriteOptions configures one schedule edit.
type ScheduleWriteOptions struct {
	// ExpectedVersion, when set, makes the edit a compare-and-set: it
	// applies only if the schedule's version equals it, and otherwise fails
	// with a *StaleVersionError (errors.Is ErrStale) and writes nothing.
	ExpectedVersion *int64
}

// validate rejects a negative expected version, which could never match.
func (o ScheduleWriteOptions) validate() error {
	if o.ExpectedVersion != nil && *o.ExpectedVersion < 1 {
		return invalidArgument("expected version %d is below 1, the version of a new schedule", *o.ExpectedVersion)
	}
	return nil
}

// check compares the current version with the expected one, if any.
func (o ScheduleWriteOptions) check(current int64) error {
	if o.ExpectedVersion != nil && *o.ExpectedVersion != current {
		return &StaleVersionError{Expected: *o.ExpectedVersion, Current: current}
	}
	return nil
}

// ScheduleCursor is an exclusive ListSchedules position: the last schedule
// of a page.
type ScheduleCursor struct {
	// Scope and Name are those of the last listed schedule.
	Scope Scope
	Name  string
}

// ListSchedulesRequest selects one page of schedules in (scope, name) order,
// the tenantless scope first.
type ListSchedulesRequest struct {
	// Scope keeps only this scope's schedules when set; nil lists every
	// scope.
	Scope *Scope
	// After continues strictly after this cursor; nil starts at the first.
	After *ScheduleCursor
	// Limit is the page size: 0 means DefaultListLimit, at most MaxListLimit.
	Limit int
}

// SchedulePage is one page of ListSchedules.
type SchedulePage struct {
	// Schedules are in (scope, name) order.
	Schedules []PeriodicSchedule
	// Next continues the listing; nil when this is the last page.
	Next *ScheduleCursor
}

// scheduleFromRow maps a stored row to its public view.
func scheduleFromRow(row dbgen.DocketSchedule) PeriodicSchedule {
	s := PeriodicSchedule{
		Scope:       scopeOf(row.TenantID),
		Name:        row.Name,
		GraphID:     row.GraphID,
		GraphHash:   row.GraphHash,
		State:       json.RawMessage(row.State),
		Cron:        deref(row.CronExpr),
		TimeZone:    row.TimeZone,
		MissedTicks: MissedTicks(row.MissedTicks),
		Paused:      row.Paused,
		PausedAt:    row.PausedAt,
		NextTickAt:  row.NextTickAt,
		LastTickAt:  row.LastTickAt,
		CreatedAt:   row.CreatedAt,
		UpdatedAt:   row.UpdatedAt,
		Version:     row.Version,
	}
	if row.IntervalSeconds != nil {
		s.Every = time.Duration(*row.IntervalSeconds) * time.Second
	}
	return s
}

// ErrInvalidSchedule reports a schedule definition Docket refuses: a cron
// expression, interval, time zone, name or missed-tick policy outside its
// documented domain. Every *ScheduleError matches it, and ErrInvalidArgument
// too, so callers that only check for invalid input need nothing new.
var ErrInvalidSchedule = errors.New("docket: invalid schedule")

// ScheduleError says which part of a schedule definition was refused and
// why; nothing was written.
type ScheduleError struct {
	// Field names the refused part: "cron", "cron minute", "cron hour",
	// "cron day-of-month", "cron month", "cron day-of-week", "every",
	// "time zone", "name", "missed ticks" or "start".
	Field string
	// Value is the refused text, as given.
	Value string
	// Reason says what is wrong with it.
	Reason string
}

func (e *ScheduleError) Error() string {
	return fmt.Sprintf("docket: invalid schedule: %s %s: %s", e.Field, quoteID(e.Value), e.Reason)
}

// Is makes errors.Is hold for ErrInvalidSchedule and ErrInvalidArgument.
func (e *ScheduleError) Is(target error) bool {
	return target == ErrInvalidSchedule || target == ErrInvalidArgument
}

// scheduleError returns a *ScheduleError.
func scheduleError(field, value, format string, args ...any) error {
	return &ScheduleError{Field: field, Value: value, Reason: fmt.Sprintf(format, args...)}
}

// ErrDuplicateSchedule reports an AddSchedule whose name its scope already
// uses; nothing was written.
var ErrDuplicateSchedule = errors.New("docket: duplicate schedule name")

// AddSchedule stores a schedule whose ticks a Worker with
// WorkerConfig.Schedules inserts as runs (see ScheduleRunID). The first
// tick is the first one after s.Start (or after now). A bad definition is a
// *ScheduleError (errors.Is ErrInvalidSchedule and ErrInvalidArgument), a
// name its scope already uses is ErrDuplicateSchedule; neither writes
// anything. On success it wakes the domain's listening Workers, so one
// takes the new schedule into account at once.
func (c *store) AddSchedule(ctx context.Context, s NewSchedule) (PeriodicSchedule, error) {
	return timed(ctx, c.telemetry, opAddSchedule, func() (PeriodicSchedule, error) {
		v, err := c.validateSchedule(s, time.Now())
		if err != nil {
			return PeriodicSchedule{}, err
		}
		row, err := c.queries.InsertSchedule(ctx, dbgen.InsertScheduleParams{
			TenantID:        s.Scope.tenantColumn(),
			Name:            s.Name,
			GraphID:         s.GraphID,
			GraphHash:       s.GraphHash,
			State:           string(s.State),
			CronExpr:        v.cron,
			IntervalSeconds: v.seconds,
			TimeZone:        v.zone,
			MissedTicks:     string(v.missed),
			NextTickAt:      v.firstTick,
		})
		if errors.Is(err, pgx.ErrNoRows) {
			return PeriodicSchedule{}, fmt.Errorf("%w: %s in %s", ErrDuplicateSchedule, quoteID(s.Name), s.Scope)
		}
		if err != nil {
			return PeriodicSchedule{}, fmt.Errorf("docket: add schedule: %w", err)
		}
		c.announceDue(ctx, c.queries, time.Time{})
		return scheduleFromRow(row), nil
	})
}

// ListSchedules returns one page of schedules in (scope, name) order, of one
// scope or of all, with a keyset cursor: each page is one statement on the
// (scope, name) index, and a page with more after it carries Next.
func (c *store) ListSchedules(ctx context.Context, req ListSchedulesRequest) (SchedulePage, error) {
	return timed(ctx, c.telemetry, opListSchedules, func() (SchedulePage, error) {
		limit := req.Limit
		switch {
		case limit == 0:
			limit = DefaultListLimit
		case limit < 0 || limit > MaxListLimit:
			return SchedulePage{}, invalidArgument("list limit %d is outside 1..%d", req.Limit, MaxListLimit)
		}
		params := dbgen.ListSchedulesParams{PageLimit: int32(limit + 1)}
		if req.Scope != nil {
			key, err := c.scopeKey(*req.Scope)
			if err != nil {
				return SchedulePage{}, err
			}
			params.ScopeKey = &key
		}
		if req.After != nil {
			key, err := c.scopeKey(req.After.Scope)
			if err != nil {
				return SchedulePage{}, err
			}
			if err := requireStorable("cursor name", req.After.Name); err != nil {
				return SchedulePage{}, err
			}
			params.AfterScopeKey, params.AfterName = key, req.After.Name
		}
		rows, err := c.queries.ListSchedules(ctx, params)
		if err != nil {
			return SchedulePage{}, fmt.Errorf("docket: list schedules: %w", err)
		}
		var page SchedulePage
		if len(rows) > limit {
			rows = rows[:limit]
			last := rows[limit-1]
			page.Next = &ScheduleCursor{Scope: scopeOf(last.TenantID), Name: last.Name}
		}
		page.Schedules = make([]PeriodicSchedule, len(rows))
		for i, row := range rows {
			page.Schedules[i] = scheduleFromRow(row)
		}
		return page, nil
	})
}

// FetchSchedule returns the schedule name of scope, or ErrNotFound.
func (c *store) FetchSchedule(ctx context.Context, scope Scope, name string) (PeriodicSchedule, error) {
	return timed(ctx, c.telemetry, opFetchSchedule, func() (PeriodicSchedule, error) {
		key, err := c.scheduleAddress(scope, name)
		if err != nil {
			return PeriodicSchedule{}, err
		}
		row, err := c.queries.GetSchedule(ctx, dbgen.GetScheduleParams{ScopeKey: key, Name: name})
		if errors.Is(err, pgx.ErrNoRows) {
			return PeriodicSchedule{}, fmt.Errorf("%w: schedule %s in %s", ErrNotFound, quoteID(name), scope)
		}
		if err != nil {
			return PeriodicSchedule{}, fmt.Errorf("docket: fetch schedule: %w", err)
		}
		return scheduleFromRow(row), nil
	})
}

// scheduleAddress validates the address of an existing schedule and returns
// its scope key.
func (c *store) scheduleAddress(scope Scope, name string) (string, error) {
	key, err := c.scopeKey(scope)
	if err != nil {
		return "", err
	}
	if name == "" {
		return "", invalidArgument("schedule name is empty")
	}
	if err := requireStorable("schedule name", name); err != nil {
		return "", err
	}
	return key, nil
}

// PauseSchedule stops a schedule's ticks until ResumeSchedule and bumps its
// version. A paused schedule inserts nothing and its paused time produces no
// runs, not even under MissedAll. Pausing a paused schedule writes nothing
// and returns it as it is. A missing schedule is ErrNotFound; a version
// mismatch (ExpectedVersion) is a *StaleVersionError (ErrStale) and writes
// nothing.
func (c *store) PauseSchedule(ctx context.Context, scope Scope, name string, opts ScheduleWriteOptions) (PeriodicSchedule, error) {
	return timed(ctx, c.telemetry, opPauseSchedule, func() (PeriodicSchedule, error) {
		return c.editSchedule(ctx, scope, name, opts, func(q *dbgen.Queries, row dbgen.DocketSchedule) (dbgen.DocketSchedule, error) {
			if row.Paused {
				return row, nil
			}
			return q.SetSchedulePaused(ctx, dbgen.SetSchedulePausedParams{ID: row.ID, Paused: true, NextTickAt: row.NextTickAt})
		})
	})
}

// ResumeSchedule lets a paused schedule tick again and bumps its version. Its
// next tick becomes the first of its ticks after now (by the caller's
// clock), keeping an interval's alignment, so the paused time inserts
// nothing. Resuming a schedule that is not paused writes nothing and returns
// it as it is. Errors are those of PauseSchedule; a stored cadence this
// binary cannot read is a *ScheduleError. The resume wakes listening
// Workers.
func (c *store) ResumeSchedule(ctx context.Context, scope Scope, name string, opts ScheduleWriteOptions) (PeriodicSchedule, error) {
	return timed(ctx, c.telemetry, opResumeSchedule, func() (PeriodicSchedule, error) {
		resumed := false
		s, err := c.editSchedule(ctx, scope, name, opts, func(q *dbgen.Queries, row dbgen.DocketSchedule) (dbgen.DocketSchedule, error) {
			if !row.Paused {
				return row, nil
			}
			cad, err := cadenceOfRow(row)
			if err != nil {
				return row, err
			}
			resumed = true
			next := cad.after(row.NextTickAt, time.Now())
			return q.SetSchedulePaused(ctx, dbgen.SetSchedulePausedParams{ID: row.ID, Paused: false, NextTickAt: next})
		})
		if err == nil && resumed {
			c.announceDue(ctx, c.queries, time.Time{})
		}
		return s, err
	})
}

// editSchedule locks the schedule, checks the expected version and applies
// edit in one transaction; any error rolls everything back.
func (c *store) editSchedule(ctx context.Context, scope Scope, name string, opts ScheduleWriteOptions,
	edit func(q *dbgen.Queries, row dbgen.DocketSchedule) (dbgen.DocketSchedule, error)) (PeriodicSchedule, error) {
	key, err := c.scheduleAddress(scope, name)
	if err != nil {
		return PeriodicSchedule{}, err
	}
	if err := opts.validate(); err != nil {
		return PeriodicSchedule{}, err
	}
	var written dbgen.DocketSchedule
	err = c.inTx(ctx, func(q *dbgen.Queries) error {
		row, err := q.LockSchedule(ctx, dbgen.LockScheduleParams{ScopeKey: key, Name: name})
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("%w: schedule %s in %s", ErrNotFound, quoteID(name), scope)
		}
		if err != nil {
			return fmt.Errorf("docket: locking schedule: %w", err)
		}
		if err := opts.check(row.Version); err != nil {
			return err
		}
		written, err = edit(q, row)
		if err != nil && !errors.Is(err, ErrInvalidSchedule) {
			return fmt.Errorf("docket: writing schedule: %w", err)
		}
		return err
	})
	if err != nil {
		return PeriodicSchedule{}, err
	}
	return scheduleFromRow(written), nil
}

// RemoveSchedule deletes a schedule, so it inserts nothing more; the runs it
// inserted stay. A missing schedule is ErrNotFound; a version mismatch
// (ExpectedVersion) is a *StaleVersionError (ErrStale) and deletes nothing.
// A tick being taken when it is called is committed first.
func (c *store) RemoveSchedule(ctx context.Context, scope Scope, name string, opts ScheduleWriteOptions) error {
	return timedErr(ctx, c.telemetry, opRemoveSchedule, func() error {
		_, err := c.editSchedule(ctx, scope, name, opts, func(q *dbgen.Queries, row dbgen.DocketSchedule) (dbgen.DocketSchedule, error) {
			if _, err := q.DeleteSchedule(ctx, row.ID); err != nil {
				return row, fmt.Errorf("delete: %w", err)
			}
			return row, nil
		})
		return err
	})
}

// scheduleRunIDPrefix marks the run ids that schedule ticks insert.
const scheduleRunIDPrefix = "schedule:"

// scheduleTickLayout is RFC 3339 in UTC at second precision: every tick is
// a whole second (cron ticks whole minutes, intervals whole seconds from a
// start truncated to the second), so the text is one per tick.
const scheduleTickLayout = "2006-01-02T15:04:05Z"

// scheduleRunIDOverhead is the length of a tick run id beyond the tenant id
// and the name: the prefix, the "/" after a tenant id, "@" and the time.
const scheduleRunIDOverhead = len(scheduleRunIDPrefix) + 1 + 1 + len(scheduleTickLayout)

// ScheduleRunID returns the deterministic run id of the run that the tick at
// tick of schedule name in scope inserts: "schedule:<tenant id>/<name>@<tick
// in RFC 3339 UTC>", or "schedule:<name>@<tick>" for the tenantless scope.
// Names hold no "/", so the last "/" separates a tenant id from the name
// and ids of different scopes never collide. Run ids are global, so a run
// inserted by other means under such an id takes the tick's place: the tick
// then inserts nothing.
func ScheduleRunID(scope Scope, name string, tick time.Time) string {
	stamp := tick.UTC().Format(scheduleTickLayout)
	if id, ok := scope.TenantID(); ok {
		return scheduleRunIDPrefix + id + "/" + name + "@" + stamp
	}
	return scheduleRunIDPrefix + name + "@" + stamp
}

// Batch sizes of a take.
const (
	// DefaultScheduleBatch is the schedules one take locks when its limit
	// is zero, and the Worker's batch.
	DefaultScheduleBatch = 100
	// MaxScheduleBatch is the largest limit of a take.
	MaxScheduleBatch = 1000
)

// ScheduleTick is one tick a take handled.
type ScheduleTick struct {
	// Scope and Schedule name the schedule.
	Scope    Scope
	Schedule string
	// At is the tick's time.
	At time.Time
	// RunID is the tick's deterministic run id (ScheduleRunID).
	RunID string
	// Err is nil when the take inserted the tick's run. Otherwise nothing
	// was inserted for the tick: ErrDuplicateRun when a run with its id
	// existed already, the run's validation error when this client refuses
	// the run (a tenantless schedule under TenantRequired), or a
	// *ScheduleError for a stored cadence this binary cannot read (a row
	// written with plain SQL), whose schedule is then left as it is and
	// reported again by every take.
	Err error
}

// TakeDueTicksTx takes the ticks of up to limit schedules due at now (0
// means DefaultScheduleBatch, at most MaxScheduleBatch) inside tx: it locks
// the due, unpaused rows with "for update skip locked", inserts one run per
// tick the missed-tick policy selects through InsertRunsTx (so admission,
// caps, FIFO and the ring apply as for any run), and advances each
// schedule's next tick past now. Everything lands when tx commits; after a
// rollback the ticks are due again for the next taker. Rows another
// transaction holds are skipped: that transaction owns their ticks. The
// Worker calls it in a transaction of its own when WorkerConfig.Schedules is
// set; it is exported for applications that take ticks themselves.
func (c *Client) TakeDueTicksTx(ctx context.Context, tx pgx.Tx, now time.Time, limit int) ([]ScheduleTick, error) {
	q, err := c.withTx(tx)
	if err != nil {
		return nil, err
	}
	switch {
	case limit == 0:
		limit = DefaultScheduleBatch
	case limit < 0 || limit > MaxScheduleBatch:
		return nil, invalidArgument("schedule batch %d is outside 1..%d", limit, MaxScheduleBatch)
	}
	if err := requireStorableTime("now", now); err != nil {
		return nil, err
	}
	ticks, _, err := c.takeDueTicks(ctx, q, now, limit)
	return ticks, err
}

// tickBatch is one takeDueTicks result, carried through timed.
type tickBatch struct {
	ticks []ScheduleTick
	full  bool
}

// takeDueTicks is TakeDueTicksTx on q; full reports a batch that advanced
// limit schedules, so more may be due. Rows it cannot read are not
// advanced and do not count, so a caller that repeats full batches never
// spins on them.
func (c *Client) takeDueTicks(ctx context.Context, q *dbgen.Queries, now time.Time, limit int) ([]ScheduleTick, bool, error) {
	batch, err := timed(ctx, c.telemetry, opTakeScheduleTicks, func() (tickBatch, error) {
		rows, err := q.LockDueSchedules(ctx, dbgen.LockDueSchedulesParams{Now: now, BatchLimit: int32(limit)})
		if err != nil {
			return tickBatch{}, fmt.Errorf("docket: locking due schedules: %w", err)
		}
		var (
			ticks   []ScheduleTick
			runs    []NewRun
			advance dbgen.AdvanceSchedulesParams
		)
		for _, row := range rows {
			scope := scopeOf(row.TenantID)
			cad, err := cadenceOfRow(row)
			if err != nil {
				ticks = append(ticks, ScheduleTick{Scope: scope, Schedule: row.Name, At: row.NextTickAt, Err: err})
				continue
			}
			due, following := cad.dueTicks(row.NextTickAt, now, MissedTicks(row.MissedTicks))
			for _, at := range due {
				run := NewRun{
					RunID: ScheduleRunID(scope, row.Name, at), Scope: scope,
					GraphID: row.GraphID, GraphHash: row.GraphHash, State: row.State,
				}
				tick := ScheduleTick{Scope: scope, Schedule: row.Name, At: at, RunID: run.RunID}
				if _, tick.Err = c.newRunParams(run); tick.Err == nil {
					runs = append(runs, run)
				}
				ticks = append(ticks, tick)
			}
			advance.Ids = append(advance.Ids, row.ID)
			advance.NextTickAts = append(advance.NextTickAts, following)
			advance.LastTickAts = append(advance.LastTickAts, due[len(due)-1])
		}
		runs, err = c.dropExistingRuns(ctx, q, runs, ticks)
		if err != nil {
			return tickBatch{}, err
		}
		if _, err := c.insertRuns(ctx, q, runs); err != nil {
			return tickBatch{}, fmt.Errorf("docket: inserting tick runs: %w", err)
		}
		if len(advance.Ids) > 0 {
			if err := q.AdvanceSchedules(ctx, advance); err != nil {
				return tickBatch{}, fmt.Errorf("docket: advancing schedules: %w", err)
			}
		}
		return tickBatch{ticks, len(advance.Ids) == limit}, nil
	})
	return batch.ticks, batch.full, err
}

// dropExistingRuns removes the runs whose id exists already and marks their
// ticks ErrDuplicateRun. The schedule rows are locked, so no other taker
// inserts these ids meanwhile; a run inserted by other means between this
// read and the insert fails the take, and the next take drops it here.
func (c *Client) dropExistingRuns(ctx context.Context, q *dbgen.Queries, runs []NewRun, ticks []ScheduleTick) ([]NewRun, error) {
	if len(runs) == 0 {
		return nil, nil
	}
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.RunID
	}
	existing, err := q.ExistingRunIDs(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("docket: reading existing tick runs: %w", err)
	}
	if len(existing) == 0 {
		return runs, nil
	}
	for i := range ticks {
		if slices.Contains(existing, ticks[i].RunID) {
			ticks[i].Err = fmt.Errorf("%w: run %s", ErrDuplicateRun, quoteID(ticks[i].RunID))
		}
	}
	return slices.DeleteFunc(runs, func(r NewRun) bool { return slices.Contains(existing, r.RunID) }), nil
}
