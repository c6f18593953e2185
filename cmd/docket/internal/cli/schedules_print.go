package cli

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/docketrun/docket-go/docket"
)

// cadenceText shows a schedule's cron expression, or "every D" with D in
// the largest whole unit.
func cadenceText(s docket.PeriodicSchedule) string {
	if s.Cron != "" {
		return s.Cron
	}
	return "every " + everyText(s.Every)
}

// everyText shows an interval of whole seconds as 24h, 15m or 90s.
func everyText(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return fmt.Sprintf("%ds", d/time.Second)
}

// pausedText shows "no" or "since <time>".
func pausedText(s docket.PeriodicSchedule) string {
	if !s.Paused || s.PausedAt == nil {
		return yesNo(s.Paused)
	}
	return "since " + timeText(*s.PausedAt)
}

// lastTickText shows a schedule that never ticked as "none".
func lastTickText(s docket.PeriodicSchedule) string {
	if s.LastTickAt == nil {
		return "none"
	}
	return timeText(*s.LastTickAt)
}

// printSchedule prints one schedule as "name: value" lines.
func printSchedule(out output, s docket.PeriodicSchedule) {
	out.field("scope", s.Scope)
	out.field("name", s.Name)
	out.field("graph_id", s.GraphID)
	out.field("graph_hash", s.GraphHash)
	out.field("cadence", cadenceText(s))
	out.field("time_zone", s.TimeZone)
	out.field("missed_ticks", s.MissedTicks)
	out.field("paused", pausedText(s))
	out.field("next_tick_at", timeText(s.NextTickAt))
	out.field("last_tick_at", lastTickText(s))
	out.field("version", s.Version)
}

// scheduleLine is the JSON form of one listed schedule.
type scheduleLine struct {
	Scope        string          `json:"scope"`
	Name         string          `json:"name"`
	GraphID      string          `json:"graph_id"`
	GraphHash    string          `json:"graph_hash"`
	State        json.RawMessage `json:"state"`
	Cron         *string         `json:"cron"`
	EverySeconds *int64          `json:"every_seconds"`
	TimeZone     string          `json:"time_zone"`
	MissedTicks  string          `json:"missed_ticks"`
	Paused       bool            `json:"paused"`
	PausedAt     *string         `json:"paused_at"`
	NextTickAt   string          `json:"next_tick_at"`
	LastTickAt   *string         `json:"last_tick_at"`
	Version      int64           `json:"version"`
}

func printScheduleLines(out output, page docket.SchedulePage) error {
	enc := json.NewEncoder(out.stdout)
	for _, s := range page.Schedules {
		line := scheduleLine{
			Scope: s.Scope.String(), Name: s.Name, GraphID: s.GraphID, GraphHash: s.GraphHash, State: s.State,
			TimeZone: s.TimeZone, MissedTicks: string(s.MissedTicks), Paused: s.Paused, PausedAt: optionalTime(s.PausedAt),
			NextTickAt: timeText(s.NextTickAt), LastTickAt: optionalTime(s.LastTickAt), Version: s.Version,
		}
		if s.Cron != "" {
			line.Cron = &s.Cron
		} else {
			seconds := int64(s.Every / time.Second)
			line.EverySeconds = &seconds
		}
		if err := enc.Encode(line); err != nil {
			return fmt.Errorf("write schedule: %w", err)
		}
	}
	if page.Next != nil {
		if err := enc.Encode(nextLine{Next: formatScheduleCursor(*page.Next)}); err != nil {
			return fmt.Errorf("write cursor: %w", err)
		}
	}
	return nil
}

func printScheduleTable(out output, page docket.SchedulePage) {
	tw := tabwriter.NewWriter(out.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCOPE\tNAME\tCADENCE\tZONE\tMISSED\tPAUSED\tNEXT_TICK\tLAST_TICK\tVERSION")
	for _, s := range page.Schedules {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", s.Scope, s.Name, cadenceText(s), s.TimeZone,
			s.MissedTicks, yesNo(s.Paused), timeText(s.NextTickAt), lastTickText(s), s.Version)
	}
	tw.Flush()
	if page.Next != nil {
		fmt.Fprintf(out.stdout, "next: %s\n", formatScheduleCursor(*page.Next))
	}
}
