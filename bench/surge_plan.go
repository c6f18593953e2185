package main

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// Surge arrival shape.
const (
	surgeSteadyShare  = 0.4
	surgeBurstFactor  = 5.0
	surgeSteadyTenant = "steady-%02d"
	surgeSteadyCount  = 10
	surgeBurstTenant  = "burst"
	surgeTick         = 10 * time.Millisecond
)

// arrival is one run and when, after arrivals begin, it is due to be
// inserted.
type arrival struct {
	at  time.Duration
	run int
}

// surgePlan is the arrival schedule of the surge scenario.
type surgePlan struct {
	// steadyRate and burstRate are runs per second.
	steadyRate, burstRate float64
	// burstFrom and burstTo bound the burst, end ends the arrival period
	// and observeEnd the steady arrivals that go on after it.
	burstFrom, burstTo, end, observeEnd time.Duration
	arrivals                            []arrival
	steady, burst                       []int
}

// planSurge registers the arrivals in b: steady runs at surgeSteadyShare of
// capacity round-robin over the steady tenants for period plus observe,
// and burst runs at surgeBurstFactor times capacity from one tenant during
// a burst in the middle of period.
func planSurge(b *book, capacity float64, period, burst, observe, handler time.Duration) *surgePlan {
	p := &surgePlan{steadyRate: surgeSteadyShare * capacity, burstRate: surgeBurstFactor * capacity,
		end: period, observeEnd: period + observe}
	p.burstFrom = (period - burst) / 2
	p.burstTo = p.burstFrom + burst
	steadyEvery := time.Duration(float64(time.Second) / p.steadyRate)
	for i, at := 0, time.Duration(0); at < p.observeEnd; i, at = i+1, at+steadyEvery {
		r := b.add(fmt.Sprintf(surgeSteadyTenant, i%surgeSteadyCount), handler)
		p.steady = append(p.steady, r)
		p.arrivals = append(p.arrivals, arrival{at: at, run: r})
	}
	burstEvery := time.Duration(float64(time.Second) / p.burstRate)
	for at := p.burstFrom; at < p.burstTo; at += burstEvery {
		r := b.add(surgeBurstTenant, handler)
		p.burst = append(p.burst, r)
		p.arrivals = append(p.arrivals, arrival{at: at, run: r})
	}
	sortArrivals(p.arrivals)
	return p
}

// sortArrivals orders arrivals by due time, steady before burst at a tie.
func sortArrivals(a []arrival) {
	slices.SortStableFunc(a, func(x, y arrival) int { return cmp.Compare(x.at, y.at) })
}
