package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serveLog runs arena serve with args until it has logged that it listens
// on every address, stops it, and returns its log.
func serveLog(t *testing.T, listens int, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, append([]string{"serve", "--out", t.TempDir()}, args...), &out, &errOut) }()
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(errOut.String(), "msg=listening") < listens {
		require.True(t, time.Now().Before(deadline), "serve never listened: %s", errOut.String())
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	return errOut.String()
}

// Serving beyond this host without tokens is warned about, loudly; loopback
// and Unix sockets, or tokens, are not.
func TestServeWarnsWhenOpenBeyondThisHostWithoutTokens(t *testing.T) {
	const warning = "LISTENING BEYOND THIS HOST WITHOUT --tokens"
	log := serveLog(t, 1, "--listen", "tcp:0.0.0.0:0")
	require.Contains(t, log, `level=WARN msg="LISTENING BEYOND THIS HOST WITHOUT --tokens: anyone who can reach `)

	log = serveLog(t, 2, "--listen", "tcp::0", "--listen", "unix:"+t.TempDir()+"/a.sock")
	require.NotContains(t, log, warning)

	tokens := t.TempDir() + "/tokens.json"
	require.NoError(t, os.WriteFile(tokens, []byte(`{"agent_001": "x"}`), 0o600))
	log = serveLog(t, 1, "--listen", "tcp:0.0.0.0:0", "--tokens", tokens)
	require.NotContains(t, log, warning)
}
