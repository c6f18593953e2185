package testkit

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// TelemetryPoints maps the attributes of data points (k=v, sorted by key and
// comma-joined) to their value: a counter's sum, a histogram's count or an
// integer gauge's value.
type TelemetryPoints map[string]int64

// TelemetryAttrs builds the key of a data point from k, v pairs.
func TelemetryAttrs(kv ...string) string {
	pairs := make([]string, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		pairs = append(pairs, kv[i]+"="+kv[i+1])
	}
	slices.Sort(pairs)
	return strings.Join(pairs, ",")
}

// TelemetryCollected is what the reader holds: per instrument its kind and unit,
// its points, and every attribute value seen.
type TelemetryCollected struct {
	Shape  map[string]string // name -> "kind unit"
	Points map[string]TelemetryPoints
	Sums   map[string]TelemetryPoints // sums of the integer histograms
	// Gauges holds the values of the float gauges, keyed as Points.
	Gauges map[string]map[string]float64
	Values []string
	Keys   map[string]bool
}

// TelemetryCollect reads every metric of reader.
func TelemetryCollect(t *testing.T, ctx context.Context, reader *sdkmetric.ManualReader) TelemetryCollected {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatalf("collect: %v", err)
	}
	c := TelemetryCollected{Shape: map[string]string{}, Points: map[string]TelemetryPoints{}, Sums: map[string]TelemetryPoints{},
		Gauges: map[string]map[string]float64{}, Keys: map[string]bool{}}
	record := func(name string, set attribute.Set, v int64) string {
		var pairs []string
		for _, kv := range set.ToSlice() {
			c.Keys[string(kv.Key)] = true
			value := kv.Value.String()
			c.Values = append(c.Values, value)
			pairs = append(pairs, string(kv.Key)+"="+value)
		}
		if c.Points[name] == nil {
			c.Points[name] = TelemetryPoints{}
		}
		key := strings.Join(pairs, ",")
		c.Points[name][key] += v
		return key
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch data := m.Data.(type) {
			case metricdata.Sum[int64]:
				if !data.IsMonotonic {
					t.Errorf("%s: not a monotonic counter", m.Name)
				}
				c.Shape[m.Name] = "counter " + m.Unit
				for _, dp := range data.DataPoints {
					record(m.Name, dp.Attributes, dp.Value)
				}
			case metricdata.Histogram[float64]:
				c.Shape[m.Name] = "histogram " + m.Unit
				for _, dp := range data.DataPoints {
					record(m.Name, dp.Attributes, int64(dp.Count))
				}
			case metricdata.Histogram[int64]:
				c.Shape[m.Name] = "histogram " + m.Unit
				if c.Sums[m.Name] == nil {
					c.Sums[m.Name] = TelemetryPoints{}
				}
				for _, dp := range data.DataPoints {
					key := record(m.Name, dp.Attributes, int64(dp.Count))
					c.Sums[m.Name][key] += dp.Sum
				}
			case metricdata.Gauge[int64]:
				c.Shape[m.Name] = "gauge " + m.Unit
				for _, dp := range data.DataPoints {
					record(m.Name, dp.Attributes, dp.Value)
				}
			case metricdata.Gauge[float64]:
				c.Shape[m.Name] = "gauge " + m.Unit
				if c.Gauges[m.Name] == nil {
					c.Gauges[m.Name] = map[string]float64{}
				}
				for _, dp := range data.DataPoints {
					c.Gauges[m.Name][record(m.Name, dp.Attributes, 0)] = dp.Value
				}
			default:
				t.Errorf("%s: unexpected aggregation %T", m.Name, m.Data)
			}
		}
	}
	return c
}

// expectPoints fails unless the collected points of name are exactly want.
func (c TelemetryCollected) ExpectPoints(t *testing.T, name string, want TelemetryPoints) {
	t.Helper()
	got := c.Points[name]
	if !maps.Equal(got, want) {
		t.Errorf("%s:\n got  %v\n want %v", name, SortedPoints(got), SortedPoints(want))
	}
}

// SortedPoints lists the points of p as sorted "{key}=value" strings.
func SortedPoints(p TelemetryPoints) []string {
	out := make([]string, 0, len(p))
	for k, v := range p {
		out = append(out, fmt.Sprintf("{%s}=%d", k, v))
	}
	slices.Sort(out)
	return out
}

// WorkerTelemetryPoints keeps the points of collected whose key starts with one of
// prefixes.
func WorkerTelemetryPoints(c TelemetryCollected, name string, prefixes ...string) TelemetryPoints {
	out := TelemetryPoints{}
	for key, v := range c.Points[name] {
		for _, p := range prefixes {
			if strings.HasPrefix(key, p) {
				out[key] = v
			}
		}
	}
	return out
}
