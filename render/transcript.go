package render

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Transcripts reads the language-model transcripts of a run for the
// history pane: DIR/transcripts/AGENT.jsonl, one JSON object a turn (the
// prompt, every message of the tool loop, the decision, the usage; written
// by sdk/llm's Agent with Options.Transcripts, as `arena run --agent llm`
// and `arena serve --agent llm` do).
//
// It reads lazily and keeps little, since a transcript repeats the whole
// prompt every turn: for one agent at a time (the selected one) an index of
// its file, a tick and an offset a turn, and the exchanges the pane asked
// for, summarised and clipped. The index grows as the file does, so a run
// being watched (`arena run --view --agent llm`) shows its turns as they
// are written.
//
// A file that holds several episodes, played one after another, starts
// again at a low tick for each: the model's Episode picks the run of ticks.
// (Episodes played at the same time mix their turns in one file; those are
// not told apart.)
type Transcripts struct {
	Dir string

	agent   string
	turns   map[[2]int]turnAt // the agent's turns indexed so far, by episode and tick
	last    [2]int            // the episode and tick of the last turn indexed
	scanned int64             // how far the agent's file is indexed
	cache   map[[2]int]*Exchange
}

// turnAt is where a turn is in its file.
type turnAt struct {
	off int64
	n   int
}

// Exchange is one turn of an agent's model, summarised for the history
// pane: every line clipped.
type Exchange struct {
	Tick  int
	Lines []string
}

// Limits of what the history pane shows of an exchange, in characters and
// messages.
const (
	TranscriptClip     = 400
	TranscriptMessages = 16
	transcriptMaxLine  = 16 << 20 // a longer line is skipped
)

// OpenTranscripts returns the transcripts in dir, or nil when there is no
// such folder.
func OpenTranscripts(dir string) *Transcripts {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil
	}
	return &Transcripts{Dir: dir}
}

// TranscriptsBeside finds the transcripts of a replay file: the transcripts
// folder beside it, or beside its folder for an episode of a run of several
// (DIR/episode-NNNN/replay.jsonl). Nil when there are none.
func TranscriptsBeside(replay string) *Transcripts {
	dir := filepath.Dir(replay)
	if t := OpenTranscripts(filepath.Join(dir, "transcripts")); t != nil {
		return t
	}
	if strings.HasPrefix(filepath.Base(dir), "episode-") {
		return OpenTranscripts(filepath.Join(filepath.Dir(dir), "transcripts"))
	}
	return nil
}

// Update reads what was added to the agent's transcript since the last
// call (the whole file for a new agent: the index then holds that agent's
// alone). The history pane calls it each time it is made again.
func (t *Transcripts) Update(agent string) {
	if t == nil || agent == "" {
		return
	}
	if agent != t.agent {
		*t = Transcripts{Dir: t.Dir, agent: agent}
	}
	t.index()
}

// Turn is the agent's exchange with its model at a tick of an episode (the
// tick of its observation), or nil when the transcript has none (as far as
// it has been read: see Update).
func (t *Transcripts) Turn(agent string, episode, tick int) *Exchange {
	if t == nil || agent == "" {
		return nil
	}
	if agent != t.agent {
		t.Update(agent)
	}
	key := [2]int{max(episode, 1), tick}
	if e, ok := t.cache[key]; ok {
		return e
	}
	at, ok := t.turns[key]
	if !ok {
		return nil
	}
	e := t.read(tick, at)
	if t.cache == nil || len(t.cache) >= MaxHistory {
		t.cache = map[[2]int]*Exchange{}
	}
	t.cache[key] = e
	return e
}

// file is the agent's transcript, named as sdk/llm names it.
func (t *Transcripts) file() string {
	name := strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 {
			return '_'
		}
		return r
	}, t.agent)
	return filepath.Join(t.Dir, name+".jsonl")
}

// index reads the agent's file from where it stopped, up to its last whole
// line, noting each turn's tick and place.
func (t *Transcripts) index() {
	f, err := os.Open(t.file())
	if err != nil {
		return
	}
	defer f.Close()
	if _, err := f.Seek(t.scanned, io.SeekStart); err != nil {
		return
	}
	r := bufio.NewReaderSize(f, 64<<10)
	var head struct {
		Tick *int `json:"tick"`
	}
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return // the rest is not a whole line yet
		}
		off := t.scanned
		t.scanned += int64(len(line))
		head.Tick = nil
		if len(line) > transcriptMaxLine || json.Unmarshal(line, &head) != nil || head.Tick == nil {
			continue
		}
		if t.last[0] == 0 || *head.Tick <= t.last[1] {
			t.last[0]++ // ticks start again: the next episode
		}
		t.last[1] = *head.Tick
		if t.turns == nil {
			t.turns = map[[2]int]turnAt{}
		}
		t.turns[t.last] = turnAt{off: off, n: len(line)}
	}
}

// read summarises the turn at a place in the agent's file.
func (t *Transcripts) read(tick int, at turnAt) *Exchange {
	e := &Exchange{Tick: tick}
	f, err := os.Open(t.file())
	if err != nil {
		e.Lines = []string{"transcript: " + err.Error()}
		return e
	}
	defer f.Close()
	b := make([]byte, at.n)
	if _, err := f.ReadAt(b, at.off); err != nil {
		e.Lines = []string{"transcript: " + err.Error()}
		return e
	}
	var turn struct {
		Messages []struct {
			Role      string `json:"role"`
			Content   string `json:"content"`
			Name      string `json:"name"`
			ToolCalls []struct {
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
		Usage struct {
			ModelCalls int `json:"model_calls"`
			TokensIn   int `json:"tokens_in"`
			TokensOut  int `json:"tokens_out"`
		} `json:"usage"`
		TokensEstimated bool   `json:"tokens_estimated"`
		Error           string `json:"error"`
	}
	if err := json.Unmarshal(b, &turn); err != nil {
		e.Lines = []string{"transcript: unreadable turn: " + err.Error()}
		return e
	}
	add := func(s string) { e.Lines = append(e.Lines, clip(oneLine(s), TranscriptClip)) }
	u := turn.Usage
	est := ""
	if turn.TokensEstimated {
		est = " (estimated)"
	}
	add(fmt.Sprintf("model: %d calls, %d tokens in, %d out%s", u.ModelCalls, u.TokensIn, u.TokensOut, est))
	shown := 0
	for i, m := range turn.Messages {
		if shown == TranscriptMessages {
			add(fmt.Sprintf("... %d more messages", len(turn.Messages)-i))
			break
		}
		switch m.Role {
		case "system":
			add(fmt.Sprintf("system prompt: %d chars", len([]rune(m.Content))))
			continue
		case "user":
			add(fmt.Sprintf("prompt (%d chars): %s", len([]rune(m.Content)), m.Content))
		case "assistant":
			if strings.TrimSpace(m.Content) != "" {
				add("says: " + m.Content)
			}
			for _, c := range m.ToolCalls {
				add("calls " + c.Function.Name + " " + c.Function.Arguments)
			}
		case "tool":
			add("gets (" + m.Name + "): " + m.Content)
		default:
			add(m.Role + ": " + m.Content)
		}
		shown++
	}
	if turn.Error != "" {
		add("error: " + turn.Error)
	}
	return e
}

// oneLine joins a text's lines with " / " and trims it.
func oneLine(s string) string {
	var parts []string
	for l := range strings.Lines(s) {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, " / ")
}
