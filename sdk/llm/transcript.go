package llm

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// transcript appends turns to DIR/AGENT.jsonl.
type transcript struct {
	dir string
	mu  sync.Mutex
}

func (w *transcript) write(t *turn) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		return
	}
	name := strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 {
			return '_'
		}
		return r
	}, t.Agent)
	if name == "" {
		name = "agent"
	}
	f, err := os.OpenFile(filepath.Join(w.dir, name+".jsonl"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	b, err := json.Marshal(t)
	if err != nil {
		return
	}
	f.Write(append(b, '\n'))
}
