package engine

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"

	"github.com/arena-sim/arena/world"
)

// Results is what an episode produced: per-agent and per-team scores and
// metrics, pass/fail, and the final state hash. It holds nothing that depends
// on wall-clock time, so the same seed and decisions give the same file.
type Results struct {
	Scenario string `json:"scenario"`
	Episode  int    `json:"episode,omitempty"` // 1-based, in a run of several
	Seed     uint64 `json:"seed"`
	// SecretSeed is the hidden-information seed, for the operator's files
	// only: results sent to agents (episode_end) never carry it.
	SecretSeed uint64 `json:"secret_seed,omitempty"`
	// EpisodeID is the episode's public identifier (a server's; agents
	// receive it in welcome and episode_start instead of a seed).
	EpisodeID string  `json:"episode_id,omitempty"`
	Ticks     int     `json:"ticks"`
	TickRate  float64 `json:"tick_rate"`
	// EndReason is the protocol's episode_end reason: "completed", "time_limit"
	// or "stopped". Outcome says more: "objective_met", "all_dead", ...
	EndReason      string          `json:"end_reason"`
	Outcome        string          `json:"outcome"`
	FinalStateHash string          `json:"final_state_hash"`
	Objective      world.Objective `json:"objective"`
	Passed         bool            `json:"passed"`
	MeanScore      float64         `json:"mean_score"`
	Agents         []AgentResult   `json:"agents"`
	Teams          []TeamResult    `json:"teams,omitempty"`
	// Winner is the team that won a capture game (absent otherwise, and on a draw).
	Winner string `json:"winner,omitempty"`
}

// AgentResult is one agent's outcome.
type AgentResult struct {
	ID      string             `json:"id"`
	Team    string             `json:"team,omitempty"`
	Score   float64            `json:"score"`
	Passed  bool               `json:"passed"`
	Alive   bool               `json:"alive"`
	Metrics map[string]float64 `json:"metrics"`
	// Usage is what a model-driven agent spent (its controller is a
	// UsageReporter); absent for other agents. Its latency is the one part
	// of the results that depends on wall-clock time.
	Usage *Usage `json:"usage,omitempty"`
}

// Usage is a model-driven agent's cost over an episode: model calls,
// retries, tokens in (prompt) and out (completion), and the time spent
// waiting for the model.
type Usage struct {
	ModelCalls int   `json:"model_calls"`
	Retries    int   `json:"retries"`
	TokensIn   int   `json:"tokens_in"`
	TokensOut  int   `json:"tokens_out"`
	LatencyMS  int64 `json:"latency_ms"`
	// TokensEstimated says some of the tokens are estimates (about 4
	// characters a token): the model server reported none for a call, as for
	// a stream the agent closed at a tool tag.
	TokensEstimated bool `json:"tokens_estimated,omitempty"`
}

// UsageReporter is a Controller that reports its Usage (sdk/llm's agent).
type UsageReporter interface {
	Usage() Usage
}

// TeamResult aggregates a team's agents: the mean score, and passed when every
// member passed. In a capture game it also has the team's game score and the
// points it captured.
type TeamResult struct {
	Team      string   `json:"team"`
	Score     float64  `json:"score"`
	Passed    bool     `json:"passed"`
	Agents    []string `json:"agents"`
	GameScore *int     `json:"game_score,omitempty"`
	Captures  *int     `json:"captures,omitempty"`
}

// Collect scores every agent of a finished (or stopped) world.
func Collect(w *world.World, reason string) *Results {
	outcome := reason
	switch reason {
	case "completed":
		outcome = "objective_met"
		if over, winner := w.GameOver(); over {
			outcome = "team_won"
			if winner == "" {
				outcome = "draw"
			}
		}
	case "all_dead":
		reason = "completed"
	}
	res := &Results{
		Scenario: w.Name(), Seed: w.Seed(), SecretSeed: w.SecretSeed(), Ticks: w.Tick(), TickRate: w.TickRate(), EndReason: reason, Outcome: outcome,
		FinalStateHash: world.FormatHash(w.StateHash()), Objective: w.Objective(), Passed: true,
	}
	teams := map[string]*TeamResult{}
	var sum float64
	for _, a := range w.Agents() {
		score, passed := w.Score(a)
		res.Agents = append(res.Agents, AgentResult{ID: a.ID, Team: a.Team, Score: score, Passed: passed, Alive: a.Alive, Metrics: w.Metrics(a)})
		sum += score
		res.Passed = res.Passed && passed
		if a.Team != "" {
			t := teams[a.Team]
			if t == nil {
				t = &TeamResult{Team: a.Team, Passed: true}
				teams[a.Team] = t
			}
			t.Score += score
			t.Passed = t.Passed && passed
			t.Agents = append(t.Agents, a.ID)
		}
	}
	if n := len(res.Agents); n > 0 {
		res.MeanScore = math.Round(sum/float64(n)*100) / 100
	} else {
		res.Passed = false
	}
	for _, st := range w.Standings() {
		if t := teams[st.Team]; t != nil {
			t.GameScore, t.Captures = &st.Score, &st.Captures
		}
	}
	_, res.Winner = w.GameOver()
	for _, t := range teams {
		t.Score = math.Round(t.Score/float64(len(t.Agents))*100) / 100
		res.Teams = append(res.Teams, *t)
	}
	sort.Slice(res.Teams, func(i, j int) bool { return res.Teams[i].Team < res.Teams[j].Team })
	return res
}

// ForAgents is the results as an agent may see them: without the secret
// seed, which only the operator's files keep (see docs/secrecy.md). Every
// way results reach an agent (the wire's episode_end, MCP) goes through here.
func (r *Results) ForAgents() *Results {
	if r == nil {
		return nil
	}
	c := *r
	c.SecretSeed = 0
	return &c
}

// WriteFileAtomic writes data to path so that readers see either the old file
// or the whole new one: a temporary file in the same folder, synced, then renamed.
func WriteFileAtomic(path string, data []byte) error { return WriteFileAtomicMode(path, data, 0o644) }

// WriteFileAtomicMode is WriteFileAtomic with the file's permissions (0600
// for a secret): the file never exists with wider ones.
func WriteFileAtomicMode(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// WriteJSON writes results as indented JSON, atomically.
func (r *Results) WriteJSON(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	return WriteFileAtomic(path, append(data, '\n'))
}
