package engine_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/arena-sim/arena/engine"
	"github.com/stretchr/testify/require"
)

// Fixed (engine/journal.go, write): a journal that could not be written (the
// disk full) kept the part of the line that did fit, so it no longer ended
// with a complete line. The part is cut off. The disk is made "full" with a
// file size limit (writes past it fail with EFBIG, SIGXFSZ ignored).
func TestAJournalOnAFullDiskEndsWithACompleteLine(t *testing.T) {
	signal.Ignore(syscall.SIGXFSZ)
	defer signal.Reset(syscall.SIGXFSZ)
	var old syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old))
	path := filepath.Join(t.TempDir(), "replay.jsonl")
	j, err := engine.CreateJournal(path, engine.JournalHeader{Scenario: "foraging"})
	require.NoError(t, err)
	full := old
	full.Cur = 10_000
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_FSIZE, &full))
	var werr error
	tick := 0
	for ; werr == nil && tick < 1000; tick++ {
		werr = j.WriteTick(engine.TickRecord{Tick: tick, Hash: strings.Repeat("h", 777)})
	}
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old))
	require.ErrorIs(t, werr, syscall.EFBIG)
	require.Error(t, j.WriteTick(engine.TickRecord{Tick: tick}), "nothing more is written")
	j.Close()

	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NotEmpty(t, b)
	require.Equal(t, byte('\n'), b[len(b)-1], "the journal ends with a complete line")
	lines := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), "line %d", lines)
		lines++
	}
	require.Equal(t, tick, lines, "the header, then every tick written but the last")
}
