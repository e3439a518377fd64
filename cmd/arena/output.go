package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/eval"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/world"
)

// replayFile and resultsFile are the names of an episode's files.
const (
	replayFile  = "replay.jsonl"
	resultsFile = "results.json"
)

// folder is the engine.Recorder that writes each episode's replay and
// results into a folder: DIR itself when the run has one episode, and
// DIR/episode-NNNN when it has several. Episodes touch only their own files,
// so one folder serves parallel episodes.
type folder struct {
	dir      string
	episodes int
	sc       *scenarios.Scenario
	replays  bool // write replays (results are always written)
}

func (f *folder) episodeDir(ep int) string {
	if f.episodes <= 1 {
		return f.dir
	}
	return filepath.Join(f.dir, fmt.Sprintf("episode-%04d", ep))
}

// Begin implements engine.Recorder.
func (f *folder) Begin(ep int, w *world.World) (*engine.Journal, error) {
	dir := f.episodeDir(ep)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create output folder: %w", err)
	}
	if !f.replays {
		return nil, nil
	}
	ids := make([]string, 0, len(w.Agents()))
	for _, a := range w.Agents() {
		ids = append(ids, a.ID)
	}
	return engine.CreateJournal(filepath.Join(dir, replayFile), engine.JournalHeader{
		Scenario: f.sc.Name, ScenarioFile: json.RawMessage(compactJSON(f.sc.Raw)), Seed: w.Seed(), SecretSeed: w.SecretSeed(), Episode: ep, Agents: ids, Variables: w.Variables(),
		DecisionPeriod: f.sc.Limits.DecisionPeriod, TimeLimit: w.Objective().TimeLimit, InitialHash: world.FormatHash(w.StateHash()),
	})
}

// End implements engine.Recorder: it closes the replay, writes the results
// atomically, and the components' tables and plots beside them.
func (f *folder) End(ep int, w *world.World, j *engine.Journal, res *engine.Results, runErr error) error {
	if j != nil {
		if err := j.Close(); err != nil && runErr == nil {
			runErr = err
		}
	}
	if runErr != nil {
		return runErr
	}
	if _, err := eval.WriteComponentReports(f.episodeDir(ep), w); err != nil {
		return err
	}
	return res.WriteJSON(filepath.Join(f.episodeDir(ep), resultsFile))
}

func compactJSON(raw []byte) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil
	}
	return b.Bytes()
}
