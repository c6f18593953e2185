package console

import (
	"fmt"
	"math"
	"net/http"
	"strconv"

	"github.com/docketrun/docket-go/docket"
)

// ringView is the ring page's content.
type ringView struct {
	docket.RingWindow
	// Dots place the window's positions on the drawn circle, in order.
	Dots []ringDot
	// CursorShown reports whether the cursor's position is in the window.
	CursorShown bool
	// PrevURL, NextURL and CursorURL page the window; "" when there is none.
	PrevURL, NextURL, CursorURL string
	// States are the legend's entries.
	States []docket.RingState
	// Empty counts the positions outside the ring proper: partitions
	// without unfinished runs.
	Empty int64
}

// ringDot is one position drawn on the circle.
type ringDot struct {
	docket.RingSlot
	X, Y   string
	Cursor bool
}

// Geometry of the ring SVG, in user units: a circle of ringRadius around
// (ringCentre, ringCentre).
const (
	ringCentre = 170
	ringRadius = 140
)

var ringStates = []docket.RingState{docket.RingEligible, docket.RingCapped, docket.RingDormant, docket.RingPaused, docket.RingParked, docket.RingEmpty}

// ringPage serves "/ring": a window of ring positions centred on the cursor
// (or from the "from" position), drawn in order with the cursor marked, and
// the ring's counts as the domain page shows them.
func (h *Handler) ringPage(w http.ResponseWriter, r *http.Request) {
	req := docket.RingWindowRequest{}
	if v := r.URL.Query().Get("from"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			h.failErr(w, r, "ring", fmt.Errorf("%w: from %q is not a positive integer", errBadInput, v))
			return
		}
		req.From = n
	}
	var err error
	if req.Limit, err = pageSize(r.URL.Query()); err != nil {
		h.failErr(w, r, "ring", err)
		return
	}
	win, err := h.admin.RingWindow(r.Context(), req)
	if err != nil {
		h.failErr(w, r, "ring", err)
		return
	}
	v := ringView{RingWindow: win, States: ringStates, Empty: win.Partitions - win.RingSize}
	limit := ""
	if r.URL.Query().Has("limit") {
		limit = "&limit=" + strconv.Itoa(req.Limit)
	}
	if win.Prev > 0 {
		v.PrevURL = h.prefix + "/ring?from=" + strconv.FormatInt(win.Prev, 10) + limit
	}
	if win.Next > 0 {
		v.NextURL = h.prefix + "/ring?from=" + strconv.FormatInt(win.Next, 10) + limit
	}
	if req.From != 0 {
		v.CursorURL = h.prefix + "/ring"
		if limit != "" {
			v.CursorURL += "?" + limit[1:]
		}
	}
	// The circle is drawn from the cursor's position at the top, clockwise
	// in ring order; without the cursor in the window, from the window's
	// first position.
	n, top := len(win.Slots), 0
	for i, s := range win.Slots {
		if s.Position == win.Cursor {
			top = i
		}
	}
	for i, s := range win.Slots {
		angle := 2*math.Pi*float64(i-top)/float64(max(n, 1)) - math.Pi/2
		d := ringDot{
			RingSlot: s,
			X:        strconv.FormatFloat(ringCentre+ringRadius*math.Cos(angle), 'f', 1, 64),
			Y:        strconv.FormatFloat(ringCentre+ringRadius*math.Sin(angle), 'f', 1, 64),
			Cursor:   s.Position == win.Cursor,
		}
		v.CursorShown = v.CursorShown || d.Cursor
		v.Dots = append(v.Dots, d)
	}
	h.render(w, r, http.StatusOK, "ring", view{Title: "Ring", Nav: "ring", Data: v})
}
