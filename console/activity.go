package console

import (
	"strconv"

	"github.com/docketrun/docket-go/docket"
)

// activityChart is the domain page's activity chart: bars per minute on a
// count axis with a round top, and the labels of both axes.
type activityChart struct {
	Bars []activityBar
	// YTicks label the count axis from 0 to its top.
	YTicks []chartTick
	// XTicks label every other minute, the oldest first.
	XTicks []chartTick
}

// activityBar is one minute of the activity chart, scaled to chartHeight.
type activityBar struct {
	docket.MinuteActivity
	// X is the bar group's left edge; ClaimedH, FinishedH and UpdatedH are
	// the bar heights and ClaimedY, FinishedY and UpdatedY their tops.
	X                             int
	ClaimedH, FinishedH, UpdatedH int
	ClaimedY, FinishedY, UpdatedY int
}

// chartTick is one axis label at a position along its axis.
type chartTick struct {
	At    int
	Label string
}

// Chart geometry of the activity SVG, in user units: the plot starts
// chartLeft from the left and chartTop from the top, its bars are
// chartHeight high at most, and each minute's group of three 8-unit bars
// starts barGroup after the last (the template draws the bars and axes).
const (
	chartLeft   = 48
	chartTop    = 12
	chartHeight = 100
	barGroup    = 30
)

// chartBase is the y of the count axis's zero.
const chartBase = chartTop + chartHeight

// activityScale returns the count axis's top and its step: the step is 1, 2
// or 5 times a power of ten, the smallest that labels the largest count in
// at most four steps, and the top the first step at or above it (1 for an
// idle domain).
func activityScale(peak int64) (top, step int64) {
	peak = max(peak, 1)
	for unit := int64(1); ; unit *= 10 {
		for _, m := range []int64{1, 2, 5} {
			step = m * unit
			if (peak+step-1)/step <= 4 {
				return (peak + step - 1) / step * step, step
			}
		}
	}
}

// activityChartOf scales minutes to the chart: the axis's top is full
// height.
func activityChartOf(minutes []docket.MinuteActivity) activityChart {
	var peak int64
	for _, m := range minutes {
		peak = max(peak, m.Claimed, m.Finished, m.Updated)
	}
	top, step := activityScale(peak)
	scale := func(n int64) int { return int(n * chartHeight / top) }
	var c activityChart
	for v := int64(0); v <= top; v += step {
		c.YTicks = append(c.YTicks, chartTick{At: chartBase - scale(v), Label: strconv.FormatInt(v, 10)})
	}
	c.Bars = make([]activityBar, len(minutes))
	for i, m := range minutes {
		b := activityBar{MinuteActivity: m, X: chartLeft + i*barGroup + 3}
		b.ClaimedH, b.FinishedH, b.UpdatedH = scale(m.Claimed), scale(m.Finished), scale(m.Updated)
		b.ClaimedY, b.FinishedY, b.UpdatedY = chartBase-b.ClaimedH, chartBase-b.FinishedH, chartBase-b.UpdatedH
		c.Bars[i] = b
		if i%2 == 0 {
			c.XTicks = append(c.XTicks, chartTick{At: chartLeft + i*barGroup + barGroup/2, Label: m.Minute.UTC().Format("15:04")})
		}
	}
	return c
}
