package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// adminClient talks HTTP to an admin endpoint on a Unix socket.
func adminClient(sock string) *http.Client {
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
}

var ticksLine = regexp.MustCompile(`(?m)^arena_ticks_total (\S+)$`)

// scrapedTicks reads arena_ticks_total, or -1 while the server is not up.
func scrapedTicks(c *http.Client) float64 {
	resp, err := c.Get("http://admin/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := ticksLine.FindSubmatch(b)
	if m == nil {
		return -1
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return v
}

// TestSIGTERMDrainsTheServer runs arena serve as a process, sends it SIGTERM
// in the middle of its first episode of three, and checks that the episode
// finished by itself (or, past --drain-timeout, was stopped), every file was
// written, no other episode started and the process exited 0.
func TestSIGTERMDrainsTheServer(t *testing.T) {
	for _, c := range []struct {
		name, drainTimeout, endReason string
	}{
		{"finishes", "30s", "completed"},
		{"times out", "200ms", "stopped"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			sock := filepath.Join(dir, "admin.sock")
			cmd := exec.Command(os.Args[0], "-test.run", "^$")
			cmd.Env = append(os.Environ(), "ARENA_TEST_MAIN="+strings.Join([]string{"serve", "--scenario", "foraging", "--seed", "1",
				"--bots", "2", "--mode", "realtime", "--tick-rate", "60", "--episodes", "3", "--out", dir,
				"--listen", "unix:" + filepath.Join(dir, "arena.sock"), "--admin-listen", "unix:" + sock,
				"--drain-timeout", c.drainTimeout, "--log-format", "json"}, "\n"))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			require.NoError(t, cmd.Start())
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			defer cmd.Process.Kill()

			client := adminClient(sock)
			var at float64
			require.Eventually(t, func() bool { at = scrapedTicks(client); return at >= 20 }, 30*time.Second, 10*time.Millisecond)
			require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
			select {
			case err := <-exited:
				var exit *exec.ExitError
				if errors.As(err, &exit) {
					t.Fatalf("exit status %d\n%s", exit.ExitCode(), stderr.String())
				}
				require.NoError(t, err)
			case <-time.After(60 * time.Second):
				t.Fatalf("still running after SIGTERM\n%s", stderr.String())
			}

			var res struct {
				Ticks     int    `json:"ticks"`
				EndReason string `json:"end_reason"`
			}
			b, err := os.ReadFile(filepath.Join(dir, "episode-0001", resultsFile))
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &res))
			require.Equal(t, c.endReason, res.EndReason)
			require.Greater(t, float64(res.Ticks), at, "the episode went on after SIGTERM")
			if c.endReason == "completed" {
				require.Equal(t, 189, res.Ticks, "foraging with seed 1 ends after 189 ticks")
			}
			rep := readReplay(t, filepath.Join(dir, "episode-0001", replayFile))
			require.NotNil(t, rep.Results, "the replay has its end line")
			require.Equal(t, c.endReason, rep.Results.EndReason)
			require.Len(t, rep.Ticks, res.Ticks)
			for _, f := range []string{"report.json", "episodes.csv", "episodes.json"} {
				require.FileExists(t, filepath.Join(dir, f))
			}
			require.NoDirExists(t, filepath.Join(dir, "episode-0002"), "no episode starts while draining")

			// Structured logs: every line is a JSON object.
			var msgs []string
			sc := bufio.NewScanner(&stderr)
			for sc.Scan() {
				var line map[string]any
				require.NoError(t, json.Unmarshal(sc.Bytes(), &line), sc.Text())
				msgs = append(msgs, line["msg"].(string))
			}
			require.Contains(t, msgs, "SIGTERM: draining")
			require.Contains(t, msgs, "draining: the episode under way is the last")
		})
	}
}
