package console

import "github.com/docketrun/docket-go/docket"

// activityBar is one minute of the activity chart, scaled to chartHeight.
type activityBar struct {
	docket.MinuteActivity
	// X is the bar group's left edge; ClaimedH, FinishedH and UpdatedH are
	// the bar heights and ClaimedY, FinishedY and UpdatedY their tops.
	X                             int
	ClaimedH, FinishedH, UpdatedH int
	ClaimedY, FinishedY, UpdatedY int
}

// Chart geometry of the activity SVG, in user units: bars are chartHeight
// high at most, and each minute's group of three 8-unit bars starts barGroup
// after the last (the template draws the bars).
const (
	chartHeight = 100
	barGroup    = 30
)

// activityBars scales minutes to the chart: the largest count is full height.
func activityBars(minutes []docket.MinuteActivity) []activityBar {
	var peak int64 = 1
	for _, m := range minutes {
		peak = max(peak, m.Claimed, m.Finished, m.Updated)
	}
	scale := func(n int64) int { return int(n * chartHeight / peak) }
	bars := make([]activityBar, len(minutes))
	for i, m := range minutes {
		b := activityBar{MinuteActivity: m, X: i * barGroup}
		b.ClaimedH, b.FinishedH, b.UpdatedH = scale(m.Claimed), scale(m.Finished), scale(m.Updated)
		b.ClaimedY, b.FinishedY, b.UpdatedY = chartHeight-b.ClaimedH, chartHeight-b.FinishedH, chartHeight-b.UpdatedH
		bars[i] = b
	}
	return bars
}
