package eval

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/arena-sim/arena/engine"
)

// Report is what an evaluation produced: one row per episode, in episode
// order, and every metric aggregated over the episodes.
type Report struct {
	Scenario string       `json:"scenario"`
	Seed     uint64       `json:"seed"`
	Episodes []EpisodeRow `json:"episodes"`
	// PassRate is the share of episodes every agent passed.
	PassRate float64 `json:"pass_rate"`
	// Score aggregates the episodes' mean scores.
	Score Aggregate `json:"score"`
	// Metrics aggregates each metric's per-episode mean over the agents,
	// sorted by name.
	Metrics []Aggregate `json:"metrics"`
	// Teams aggregates each team's score, sorted by team.
	Teams []Aggregate `json:"teams,omitempty"`
	// Results are the episodes' full results, in episode order.
	Results []*engine.Results `json:"-"`
}

// EpisodeRow is one episode: its seed and outcome, and each metric's mean
// over its agents.
type EpisodeRow struct {
	Episode        int                `json:"episode"`
	Seed           uint64             `json:"seed"`
	Ticks          int                `json:"ticks"`
	EndReason      string             `json:"end_reason"`
	Outcome        string             `json:"outcome"`
	Passed         bool               `json:"passed"`
	MeanScore      float64            `json:"mean_score"`
	Metrics        map[string]float64 `json:"metrics"`
	Teams          map[string]float64 `json:"teams,omitempty"`
	FinalStateHash string             `json:"final_state_hash"`
}

// Aggregate is one quantity over the episodes: mean ± standard error of the
// mean (sample standard deviation / √n), and the range.
type Aggregate struct {
	Name   string  `json:"name"`
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	StdErr float64 `json:"stderr"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// String formats the aggregate as "mean ± stderr".
func (a Aggregate) String() string {
	return strconv.FormatFloat(a.Mean, 'f', 2, 64) + " ± " + strconv.FormatFloat(a.StdErr, 'f', 2, 64)
}

// Aggregated computes the aggregate of values.
func Aggregated(name string, values []float64) Aggregate {
	a := Aggregate{Name: name, N: len(values)}
	if a.N == 0 {
		return a
	}
	a.Min, a.Max = math.Inf(1), math.Inf(-1)
	var sum float64
	for _, v := range values {
		sum += v
		a.Min, a.Max = math.Min(a.Min, v), math.Max(a.Max, v)
	}
	a.Mean = sum / float64(a.N)
	if a.N > 1 {
		var ss float64
		for _, v := range values {
			ss += (v - a.Mean) * (v - a.Mean)
		}
		a.StdErr = math.Sqrt(ss/float64(a.N-1)) / math.Sqrt(float64(a.N))
	}
	return a
}

// NewReport builds the report of episodes given in episode order. Each row
// takes its number from the results' Episode (or its position, when unset).
// Stopped episodes (end_reason "stopped": interrupted, they say nothing about
// the agents) are left out, the same way for arena eval, run and serve.
func NewReport(scenario string, seed uint64, results []*engine.Results) *Report {
	rep := &Report{Scenario: scenario, Seed: seed, Episodes: []EpisodeRow{}, Metrics: []Aggregate{}, Results: []*engine.Results{}}
	perMetric := map[string][]float64{}
	perTeam := map[string][]float64{}
	var scores []float64
	passed := 0
	for i, res := range results {
		if res.EndReason == "stopped" {
			continue
		}
		rep.Results = append(rep.Results, res)
		ep := res.Episode
		if ep == 0 {
			ep = i + 1
		}
		row := EpisodeRow{Episode: ep, Seed: res.Seed, Ticks: res.Ticks, EndReason: res.EndReason, Outcome: res.Outcome,
			Passed: res.Passed, MeanScore: res.MeanScore, Metrics: map[string]float64{}, FinalStateHash: res.FinalStateHash}
		for _, a := range res.Agents {
			for name, v := range a.Metrics {
				row.Metrics[name] += v
			}
		}
		for name, sum := range row.Metrics {
			// Rounded past float noise: a mean of 1s prints as 1.
			row.Metrics[name] = math.Round(sum/float64(len(res.Agents))*1e9) / 1e9
		}
		for _, name := range slices.Sorted(maps.Keys(row.Metrics)) {
			perMetric[name] = append(perMetric[name], row.Metrics[name])
		}
		if len(res.Teams) > 0 {
			row.Teams = map[string]float64{}
			for _, t := range res.Teams {
				row.Teams[t.Team] = t.Score
				perTeam[t.Team] = append(perTeam[t.Team], t.Score)
			}
		}
		if res.Passed {
			passed++
		}
		scores = append(scores, res.MeanScore)
		rep.Episodes = append(rep.Episodes, row)
	}
	if n := len(rep.Results); n > 0 {
		rep.PassRate = float64(passed) / float64(n)
	}
	rep.Score = Aggregated("score", scores)
	for _, name := range slices.Sorted(maps.Keys(perMetric)) {
		rep.Metrics = append(rep.Metrics, Aggregated(name, perMetric[name]))
	}
	for _, team := range slices.Sorted(maps.Keys(perTeam)) {
		rep.Teams = append(rep.Teams, Aggregated(team, perTeam[team]))
	}
	return rep
}

// MetricNames lists the report's metrics in order.
func (r *Report) MetricNames() []string {
	names := make([]string, len(r.Metrics))
	for i, m := range r.Metrics {
		names[i] = m.Name
	}
	return names
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	return nil
}

// WriteCSV writes one row per episode: its number, seed, ticks, outcome,
// pass, mean score, and every metric's mean over the agents.
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	names := r.MetricNames()
	header := append([]string{"episode", "seed", "ticks", "end_reason", "outcome", "passed", "mean_score"}, names...)
	for _, t := range r.Teams {
		header = append(header, "team."+t.Name)
	}
	header = append(header, "final_state_hash")
	cw.Write(header)
	for _, e := range r.Episodes {
		row := []string{strconv.Itoa(e.Episode), strconv.FormatUint(e.Seed, 10), strconv.Itoa(e.Ticks), e.EndReason, e.Outcome,
			strconv.FormatBool(e.Passed), num(e.MeanScore)}
		for _, name := range names {
			row = append(row, num(e.Metrics[name]))
		}
		for _, t := range r.Teams {
			row = append(row, num(e.Teams[t.Name]))
		}
		row = append(row, e.FinalStateHash)
		cw.Write(row)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
