package world

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// Objective is what the scenario asks of each agent: metrics with targets, and a
// time limit in ticks (0 = none). It follows the reference objective schema.
type Objective struct {
	Description    string                  `json:"description"`
	SuccessMetrics map[string]MetricTarget `json:"success_metrics"`
	TimeLimit      int                     `json:"time_limit"`
}

// MetricTarget is one success metric.
type MetricTarget struct {
	Target        float64 `json:"target"`
	Weight        float64 `json:"weight"`
	LowerIsBetter bool    `json:"lower_is_better"`
	Required      bool    `json:"required"`
}

// MetricNames returns the objective's metric names in sorted order.
func (o *Objective) MetricNames() []string {
	return slices.Sorted(maps.Keys(o.SuccessMetrics))
}

// MetricScore scores one metric from 0 to 100. Higher-is-better metrics score
// min(100, value/target×100); lower-is-better ones score 100 at or under the
// target and lose 10 points per unit of excess.
func MetricScore(m MetricTarget, value float64) float64 {
	if m.LowerIsBetter {
		if value <= m.Target {
			return 100
		}
		return math.Max(0, 100-10*(value-m.Target))
	}
	if m.Target <= 0 {
		return 100
	}
	return math.Max(0, math.Min(100, value/m.Target*100))
}

// Met reports whether a value reaches the metric's target.
func Met(m MetricTarget, value float64) bool {
	if m.LowerIsBetter {
		return value <= m.Target
	}
	return value >= m.Target
}

// Evaluate scores progress: the weighted mean of metric scores, and whether every
// required metric is met.
func (o *Objective) Evaluate(progress map[string]float64) (score float64, passed bool) {
	return o.evaluate(o.MetricNames(), progress)
}

// evaluate scores with the metric names already sorted (sums are added in that
// order, so that the score is the same on every run).
func (o *Objective) evaluate(names []string, progress map[string]float64) (score float64, passed bool) {
	if len(o.SuccessMetrics) == 0 {
		return 0, true
	}
	passed = true
	var sum, weights float64
	for _, name := range names {
		m := o.SuccessMetrics[name]
		w := m.Weight
		if w == 0 {
			w = 1
		}
		v := progress[name]
		sum += w * MetricScore(m, v)
		weights += w
		if m.Required && !Met(m, v) {
			passed = false
		}
	}
	return math.Round(sum/weights*100) / 100, passed
}

// standardMetrics are the metrics every world measures for every agent.
var standardMetrics = []string{
	"resources_collected", "items_crafted", "health", "damage_taken",
	"distance_travelled", "messages_sent", "time", "alive",
}

// StandardMetrics lists the metric names every world knows, besides the
// per-kind forms collected.<resource_type>, crafted.<item> and inventory.<item>.
func StandardMetrics() []string { return append([]string(nil), standardMetrics...) }

// metric returns the named metric for an agent.
func (w *World) metric(a *Agent, name string) (float64, bool) {
	switch name {
	case "resources_collected":
		return float64(a.Stats.ResourcesCollected), true
	case "items_crafted":
		return float64(a.Stats.ItemsCrafted), true
	case "health":
		return a.Health, true
	case "damage_taken":
		return a.Stats.DamageTaken, true
	case "distance_travelled":
		return round2(a.Stats.Distance), true
	case "messages_sent":
		return float64(a.Stats.MessagesSent), true
	case "alive":
		if a.Alive {
			return 1, true
		}
		return 0, true
	case "time":
		t := w.tick
		if a.Stats.CompletedTick >= 0 {
			t = a.Stats.CompletedTick
		}
		return round2(float64(t) / w.tickRate), true
	}
	if k, ok := strings.CutPrefix(name, "collected."); ok {
		return float64(a.Stats.Collected[k]), true
	}
	if k, ok := strings.CutPrefix(name, "crafted."); ok {
		return float64(a.Stats.Crafted[k]), true
	}
	if k, ok := strings.CutPrefix(name, "inventory."); ok {
		return float64(a.Inventory[k]), true
	}
	if v, ok := w.captureMetric(a, name); ok {
		return v, true
	}
	for _, c := range w.components {
		if ms, ok := c.(MetricSource); ok {
			if v, ok := ms.Metric(w, a.ID, name); ok {
				return v, true
			}
		}
	}
	return 0, false
}

// Progress returns the agent's current value of every objective metric.
func (w *World) Progress(a *Agent) map[string]float64 {
	p := make(map[string]float64, len(w.objective.SuccessMetrics))
	w.progressInto(a, p)
	return p
}

func (w *World) progressInto(a *Agent, p map[string]float64) {
	for _, name := range w.metricNames {
		p[name], _ = w.metric(a, name)
	}
}

// Metrics returns every standard metric of the agent (and, with capture rules,
// every capture metric) plus the objective's own.
func (w *World) Metrics(a *Agent) map[string]float64 {
	m := make(map[string]float64, len(standardMetrics)+len(w.objective.SuccessMetrics))
	for _, name := range standardMetrics {
		m[name], _ = w.metric(a, name)
	}
	if w.capture != nil {
		for _, name := range captureMetrics {
			m[name], _ = w.metric(a, name)
		}
	}
	w.progressInto(a, m)
	return m
}

// Score returns the agent's objective score and pass/fail now.
func (w *World) Score(a *Agent) (float64, bool) {
	return w.objective.evaluate(w.metricNames, w.Progress(a))
}

// checkMetrics reports the first objective metric the world cannot measure.
func (w *World) checkMetrics() error {
	if len(w.agents) == 0 {
		return nil
	}
	for _, name := range w.objective.MetricNames() {
		if _, ok := w.metric(w.agents[0], name); !ok {
			return fmt.Errorf("objective metric %q is unknown (known: %s, collected.<type>, crafted.<item>, inventory.<item>)",
				name, strings.Join(standardMetrics, ", "))
		}
	}
	return nil
}

// updateCompletion records when each agent first meets its required metrics
// (time excluded, since time is what completion stops).
// requiredMetric is a required metric of the objective and its target.
type requiredMetric struct {
	name   string
	target MetricTarget
}

func (w *World) updateCompletion() {
	if len(w.objective.SuccessMetrics) == 0 {
		return
	}
	for _, a := range w.agents {
		if a.Stats.CompletedTick >= 0 || !a.Alive {
			continue
		}
		done, any := true, false
		for _, r := range w.required {
			any = true
			v, _ := w.metric(a, r.name)
			if !Met(r.target, v) {
				done = false
				break
			}
		}
		if done && any {
			a.Stats.CompletedTick = w.tick
			w.Publish(Event{Type: "objective_completed", Agent: a.ID})
		}
	}
}
