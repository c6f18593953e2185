package main

import (
	"github.com/docketrun/docket-go/docket"
)

// dormantEngine is one Docket engine configuration of the dormant scenario:
// its client configuration and the targets its drain must meet.
type dormantEngine struct {
	// name names the engine's databases and its points in the JSON.
	name engineName
	// label names it in the tables and targets.
	label string
	// config is its client configuration, without a MeterProvider.
	config docket.Config
	// bounds are its targets: at each dormant tenant count, its drain rate
	// over the dormant-free TenantFair drain is at least the bound.
	bounds []dormantBound
	// parks marks a parked engine: the dormant tenants are parked before
	// the drain, as in a domain that has run in parked mode for a while,
	// and what that took is reported apart.
	parks bool
	// cold marks a parked engine whose dormant tenants are not parked
	// before the drain: parking is on from Open, so each dormant tenant's
	// insert parks it, and the drain starts right after the load. Its
	// points also time switching parking on over the dormant tenants of a
	// domain loaded with parking off while a Worker drains.
	cold bool
}

// dormantBound is one target of a dormant engine.
type dormantBound struct {
	dormant int
	atLeast float64
}

// dormantEngines are the engines the dormant scenario drains with, in run
// order. The first is the baseline: its dormant-free drain is what every
// ratio divides by.
var dormantEngines = []dormantEngine{
	{
		name: engineTenantFair, label: "TenantFair full-ring walk",
		config: docketConfig(engineTenantFair, drainCap),
		bounds: []dormantBound{{dormant: 20000, atLeast: 0.05}},
	},
	{
		name: engineTenantFairParked, label: "TenantFair parked",
		config: docketConfig(engineTenantFairParked, drainCap),
		bounds: []dormantBound{{dormant: 20000, atLeast: 0.8}, {dormant: 100000, atLeast: 0.8}},
		parks:  true,
	},
	{
		name: engineTenantFairParked, label: "TenantFair parked, cold",
		config: docketConfig(engineTenantFairParked, drainCap),
		bounds: []dormantBound{{dormant: 20000, atLeast: 0.8}, {dormant: 100000, atLeast: 0.8}},
		cold:   true,
	},
	{
		name: engineLegacy, label: "Legacy",
		config: docketConfig(engineLegacy, drainCap),
	},
}
