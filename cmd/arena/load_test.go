package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arena-sim/arena/internal/testutil"
	"github.com/arena-sim/arena/scenarios"
	"github.com/stretchr/testify/require"
)

// Fixed (scenarios/limits.go): arena run --scenario /dev/zero grew without
// bound, a FIFO hung until SIGKILL, and a scenario's texts had no limit (a
// 1 MiB description made every observation 1 MiB). A scenario must be a
// regular file of at most MaxFileSize bytes with texts of at most MaxText
// characters; anything else is refused at once with a clear error.
func TestScenarioFilesAreBounded(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.json")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	big := filepath.Join(dir, "big.json")
	require.NoError(t, os.WriteFile(big, bytes.Repeat([]byte(" "), scenarios.MaxFileSize+1), 0o600))
	foraging, err := scenarios.Load("foraging")
	require.NoError(t, err)
	long := filepath.Join(dir, "long.json")
	raw := strings.Replace(string(foraging.Raw), `"description": "`, `"description": "`+strings.Repeat("x", 1<<20), 1)
	require.NotEqual(t, string(foraging.Raw), raw)
	require.NoError(t, os.WriteFile(long, []byte(raw), 0o600))

	ok := filepath.Join(dir, "ok.json")
	require.NoError(t, os.WriteFile(ok, foraging.Raw, 0o600))
	_, err = scenarios.LoadContext(context.Background(), ok)
	require.NoError(t, err)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = scenarios.LoadContext(cancelled, ok)
	require.ErrorIs(t, err, context.Canceled, "reading gives up when the command is stopped")

	for _, tc := range []struct{ path, want string }{
		{"/dev/zero", "not a regular file"},
		{fifo, "not a regular file"},
		{big, "larger than the limit of 4194304 bytes"},
		{long, "description: a text of 1048"},
	} {
		done := make(chan error, 1)
		go func() {
			_, _, err := arena(t, "run", "--scenario", tc.path, "--out", t.TempDir())
			done <- err
		}()
		select {
		case err := <-done:
			require.ErrorContains(t, err, tc.want, tc.path)
		case <-time.After(20 * time.Second):
			t.Fatalf("loading %s did not end", tc.path)
		}
	}
}

// Fixed (cmd/arena/main.go, interruptible): SIGINT and SIGTERM only
// cancelled the command's context, so a command that did not watch it (a
// scenario being loaded) could only be killed. The first signal still asks
// for a clean stop; a second one exits at once. Real signals, sent to this
// process.
func TestASecondInterruptExitsAtOnce(t *testing.T) {
	var out testutil.SyncBuffer
	exited := make(chan int, 1)
	ctx, stop := interruptible(context.Background(), &out, func(code int) { exited <- code })
	defer stop()
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGINT))
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the first interrupt did not stop the command")
	}
	select {
	case code := <-exited:
		t.Fatalf("the first interrupt exited (%d)", code)
	default:
	}
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGTERM))
	select {
	case code := <-exited:
		require.Equal(t, 130, code)
	case <-time.After(10 * time.Second):
		t.Fatal("the second signal did not exit")
	}
	require.Equal(t, "arena: stopping (interrupt again to exit at once)\narena: interrupted again: exiting at once\n", out.String())
}
