package main

import (
	"encoding/json"
	"os"
)

// results is everything one scorecard run measured; it is written as JSON.
type results struct {
	Machine     machine           `json:"machine"`
	Quick       bool              `json:"quick"`
	Sizes       sizes             `json:"sizes"`
	RiverFetch  riverFetch        `json:"river_fetch"`
	Ceiling     *ceilingResult    `json:"ceiling,omitempty"`
	Drain       *drainResult      `json:"drain,omitempty"`
	Fairness    *fairnessResult   `json:"fairness,omitempty"`
	Scale       *scaleResult      `json:"scale,omitempty"`
	Contention  *contentionResult `json:"contention,omitempty"`
	FastSlow    *fastSlowResult   `json:"fast_slow,omitempty"`
	Surge       *surgeResult      `json:"surge,omitempty"`
	Dormant     *dormantResult    `json:"dormant,omitempty"`
	Fleet       *fleetResult      `json:"fleet,omitempty"`
	Rate        *rateResult       `json:"rate,omitempty"`
	Targets     []target          `json:"targets"`
	WallSeconds float64           `json:"wall_seconds"`
}

// write stores r as indented JSON at path.
func (r *results) write(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
