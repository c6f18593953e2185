package cli

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/docketrun/docket-go/docket"
)

// field writes one "name: value" line; results are line oriented so they
// read well and split easily in scripts.
func (o output) field(name string, value any) {
	fmt.Fprintf(o.stdout, "%s: %v\n", name, value)
}

func printDefault(out output, d docket.ClaimPolicyDefault) {
	out.field("admission_mode", d.AdmissionMode)
	out.field("initialized", d.Initialized)
	out.field("default_max_active_runs", capText(d.MaxActiveRuns))
	out.field("configured_max_active_runs", capText(d.ConfiguredMaxActiveRuns))
	out.field("park_dormant", onOff(d.ParkDormant))
	out.field("configured_park_dormant", onOff(d.ConfiguredParkDormant))
	out.field("default_rate", d.Rate)
	out.field("domain_paused", yesNo(d.Paused))
	out.field("policy_version", d.Version)
	out.field("updated_at", d.UpdatedAt.UTC().Format(time.RFC3339Nano))
}

func printOverride(out output, o docket.ClaimPolicyOverride) {
	out.field("scope", o.Scope)
	out.field("override_max_active_runs", capText(o.MaxActiveRuns))
	out.field("partition_version", o.Version)
}

func printInspection(out output, i docket.ClaimPolicyInspection) {
	out.field("scope", i.Scope)
	out.field("admission_mode", i.AdmissionMode)
	out.field("effective_max_active_runs", i.EffectiveMaxActiveRuns)
	out.field("source", i.Source)
	out.field("policy_version", i.PolicyVersion)
	out.field("partition_version", i.PartitionVersion)
	out.field("admission_epoch", i.AdmissionEpoch)
	out.field("ring_position", positionText(i.RingPosition))
	out.field("unfinished", i.Unfinished)
	out.field("parked", parkedText(i))
	out.field("paused", yesNo(i.Paused))
	out.field("queued", i.Queued)
	out.field("admitted_ready", i.AdmittedReady)
	out.field("admitted_claimed", i.AdmittedClaimed)
	out.field("admitted", i.Admitted)
	out.field("debt", i.Debt)
	out.field("rate", i.Rate)
	out.field("rate_source", rateSourceText(i.RateSource))
	if !i.Rate.IsZero() {
		out.field("rate_tokens", i.RateTokens)
		out.field("next_admission_at", nextAdmissionText(i.NextAdmissionAt))
	}
}

// printTenantRate shows a scope's rate state after a rate write.
func printTenantRate(out output, r docket.TenantRate) {
	out.field("scope", r.Scope)
	switch {
	case r.Exempt:
		out.field("rate", "exempt")
	case r.Rate.IsZero():
		out.field("rate", "default")
	default:
		out.field("rate", r.Rate)
	}
	out.field("partition_version", r.Version)
}

// rateSourceText names where a scope's rate comes from ("none" without one).
func rateSourceText(s docket.RateSource) string {
	if s == docket.RateNone {
		return "none"
	}
	return string(s)
}

// nextAdmissionText shows when a rate's next token comes: "now" while one is
// left.
func nextAdmissionText(at *time.Time) string {
	if at == nil {
		return "now"
	}
	return at.UTC().Format(time.RFC3339Nano)
}

// printPause shows a scope's pause state after a pause or resume.
func printPause(out output, p docket.TenantPause) {
	out.field("scope", p.Scope)
	out.field("paused", yesNo(p.Paused))
	out.field("partition_version", p.Version)
}

// onOff shows a switch the way set-park-dormant takes it.
func onOff(v bool) string {
	if v {
		return "on"
	}
	return "off"
}

// parkedText shows whether and until when a scope is parked: "no", "until
// <time>", or "until a write" when nothing of it is scheduled.
func parkedText(i docket.ClaimPolicyInspection) string {
	switch {
	case !i.Parked:
		return "no"
	case i.ParkedUntil == nil:
		return "until a write"
	}
	return "until " + i.ParkedUntil.UTC().Format(time.RFC3339Nano)
}

// capText shows the zero that stands for "unset" as "none".
func capText(v int) string {
	if v == 0 {
		return "none"
	}
	return fmt.Sprint(v)
}

// positionText shows a scope without a partition as "none".
func positionText(v int64) string {
	if v == 0 {
		return "none"
	}
	return fmt.Sprint(v)
}

// printRunSummary prints the outcome of a run transition.
func printRunSummary(out output, r docket.Run) {
	out.field("scope", r.Scope)
	out.field("run_id", r.RunID)
	out.field("status", r.Status)
	out.field("step", r.Step)
	out.field("checkpoint_seq", r.CheckpointSeq)
	if r.WakeAt != nil {
		out.field("wake_at", r.WakeAt.UTC().Format(time.RFC3339Nano))
	}
}

// timeText shows a time in UTC with its full precision.
func timeText(t time.Time) string {
	return t.UTC().Format(time.RFC3339Nano)
}

// optionalTime is the JSON form of a time that may be absent.
func optionalTime(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := timeText(*t)
	return &s
}

// yesNo shows a flag in a table.
func yesNo(v bool) string {
	if v {
		return "yes"
	}
	return "no"
}

// quoteArg quotes a command-line argument for a message, cut after
// docket.MaxIdentifierBytes bytes (at a character boundary) with its full
// length, so a huge argument is not echoed in full.
func quoteArg(s string) string {
	head, cut := clipText(s)
	if !cut {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(head), len(s))
}

// quoteArgs quotes arguments as quoteArg does, in brackets.
func quoteArgs(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = quoteArg(a)
	}
	return "[" + strings.Join(quoted, " ") + "]"
}

// clipText is s cut to at most docket.MaxIdentifierBytes bytes, at a
// character boundary, and whether it was cut.
func clipText(s string) (string, bool) {
	if len(s) <= docket.MaxIdentifierBytes {
		return s, false
	}
	end := docket.MaxIdentifierBytes
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end], true
}

// quotedText matches a Go-quoted string inside a message.
var quotedText = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// clipMessage is a message of another package (flag, time) with every
// quoted value cut as quoteArg cuts it, and the whole cut after twice
// docket.MaxIdentifierBytes bytes ("flag provided but not defined" names
// the flag unquoted).
func clipMessage(msg string) string {
	msg = quotedText.ReplaceAllStringFunc(msg, func(q string) string {
		s, err := strconv.Unquote(q)
		if err != nil {
			return q
		}
		return quoteArg(s)
	})
	if len(msg) <= 2*docket.MaxIdentifierBytes {
		return msg
	}
	end := 2 * docket.MaxIdentifierBytes
	for end > 0 && !utf8.RuneStart(msg[end]) {
		end--
	}
	return fmt.Sprintf("%s… (%d bytes)", msg[:end], len(msg))
}
