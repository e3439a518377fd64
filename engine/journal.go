package engine

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
)

// JournalVersion is the format version written in every journal header.
const JournalVersion = 1

// JournalHeader is the first line of a journal: enough to rebuild the world
// (the scenario file itself, the seed and the agent slots).
type JournalHeader struct {
	Type         string          `json:"type"` // "header"
	Version      int             `json:"version"`
	Scenario     string          `json:"scenario"`
	ScenarioFile json.RawMessage `json:"scenario_file,omitempty"`
	Seed         uint64          `json:"seed"`
	// SecretSeed is the world's hidden-information seed (world.SecretRand):
	// the replay needs it, and agents never see a replay.
	SecretSeed uint64   `json:"secret_seed,omitempty"`
	Episode    int      `json:"episode,omitempty"`
	Agents     []string `json:"agents"`
	// Variables are the scenario variables the world started with (sweeps
	// override the file's).
	Variables      map[string]any `json:"variables,omitempty"`
	DecisionPeriod int            `json:"decision_period"`
	TimeLimit      int            `json:"time_limit"` // ticks, after any --ticks override
	InitialHash    string         `json:"initial_hash"`
}

// Journal is the decision journal: JSON lines, a header, one line per tick with
// the decisions applied, their results, the events and the state hash, and a
// final line with the results. Every tick is flushed to the file as it is
// written, so a run that crashes leaves a journal readable up to its last
// complete tick; a line that cannot be written whole (the disk is full) is
// cut off, so the journal still ends with a complete line.
type Journal struct {
	f       *os.File
	written counter       // what reached the file
	buf     *bufio.Writer // over written
	enc     *json.Encoder
	size    int64 // bytes of complete lines in the file
}

// counter counts the bytes written through it.
type counter struct {
	w io.Writer
	n int64
}

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// CreateJournal creates (or truncates) a journal file and writes its header.
func CreateJournal(path string, h JournalHeader) (*Journal, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create journal: %w", err)
	}
	j := &Journal{f: f, written: counter{w: f}}
	j.buf = bufio.NewWriterSize(&j.written, 64<<10)
	j.enc = json.NewEncoder(j.buf)
	h.Type, h.Version = "header", JournalVersion
	if err := j.write(h); err != nil {
		f.Close()
		return nil, err
	}
	return j, nil
}

func (j *Journal) write(v any) error {
	err := j.enc.Encode(v)
	if err == nil {
		err = j.buf.Flush()
	}
	if err != nil {
		// Part of the line may be in the file: cut it off. The buffered
		// writer keeps failing, so nothing more is written.
		if j.written.n > j.size {
			j.f.Truncate(j.size)
		}
		return fmt.Errorf("write journal: %w", err)
	}
	j.size = j.written.n
	return nil
}

type tickLine struct {
	Type string `json:"type"`
	TickRecord
}

// WriteTick appends one tick. Values JSON cannot hold (NaN and infinities an
// agent sent, say) are written as {"$float": "NaN"} ("+Inf", "-Inf"), so that
// a bad decision never costs the journal and a replay sends the same value.
func (j *Journal) WriteTick(rec TickRecord) error {
	for i := range rec.Decisions {
		d := &rec.Decisions[i]
		d.Params = finiteMap(d.Params)
		d.Result.Data = finiteMap(d.Result.Data)
	}
	for i := range rec.Events {
		rec.Events[i].Data = finiteMap(rec.Events[i].Data)
	}
	return j.write(tickLine{Type: "tick", TickRecord: rec})
}

// finiteMap returns m with every non-finite float replaced by its name; m
// itself is returned when there is none (the common case).
func finiteMap(m map[string]any) map[string]any {
	if m == nil || !hasNonFinite(m) {
		return m
	}
	return finite(m).(map[string]any)
}

func hasNonFinite(v any) bool {
	switch x := v.(type) {
	case float64:
		return math.IsNaN(x) || math.IsInf(x, 0)
	case float32:
		return hasNonFinite(float64(x))
	case map[string]any:
		for _, e := range x {
			if hasNonFinite(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasNonFinite(e) {
				return true
			}
		}
	}
	return false
}

// floatKey marks a non-finite number in a journal.
const floatKey = "$float"

// unfinite undoes finite on a decoded journal value.
func unfinite(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 1 {
			switch x[floatKey] {
			case "NaN":
				return math.NaN()
			case "+Inf":
				return math.Inf(1)
			case "-Inf":
				return math.Inf(-1)
			}
		}
		for k, e := range x {
			x[k] = unfinite(e)
		}
	case []any:
		for i, e := range x {
			x[i] = unfinite(e)
		}
	}
	return v
}

func finite(v any) any {
	switch x := v.(type) {
	case float32:
		return finite(float64(x))
	case float64:
		switch {
		case math.IsNaN(x):
			return map[string]any{floatKey: "NaN"}
		case math.IsInf(x, 1):
			return map[string]any{floatKey: "+Inf"}
		case math.IsInf(x, -1):
			return map[string]any{floatKey: "-Inf"}
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = finite(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = finite(e)
		}
		return out
	}
	return v
}

// WriteEnd appends the results line.
func (j *Journal) WriteEnd(res *Results) error {
	return j.write(struct {
		Type    string   `json:"type"`
		Results *Results `json:"results"`
	}{"end", res})
}

// Close syncs and closes the journal file.
func (j *Journal) Close() error {
	if err := j.buf.Flush(); err != nil {
		j.f.Close()
		return fmt.Errorf("close journal: %w", err)
	}
	if err := j.f.Sync(); err != nil {
		j.f.Close()
		return fmt.Errorf("sync journal: %w", err)
	}
	return j.f.Close()
}
