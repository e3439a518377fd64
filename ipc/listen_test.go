package ipc_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/arena-sim/arena/ipc"
	"github.com/stretchr/testify/require"
)

// accepts requires l to accept a connection dialled to addr.
func accepts(t *testing.T, l net.Listener, addr string) {
	t.Helper()
	got := make(chan error, 1)
	go func() {
		nc, err := l.Accept()
		if err == nil {
			nc.Close()
		}
		got <- err
	}()
	nc, err := ipc.Dial(context.Background(), addr)
	require.NoError(t, err)
	nc.Close()
	require.NoError(t, <-got)
}

// Fixed (ipc/sock_unix.go): a second server on the same socket path removed
// the live server's socket file and took the path, and when the first one
// exited it removed the second one's. Now a live server's socket is left
// alone (listening fails), only a stale one is replaced, and a listener
// removes only the socket file it created.
func TestListeningDoesNotStealALiveServersSocket(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "arena.sock")
	addr := "unix:" + path
	first, err := ipc.Listen(ctx, addr)
	require.NoError(t, err)
	defer first.Close()

	_, err = ipc.Listen(ctx, addr)
	require.ErrorContains(t, err, "a server is already listening on "+path)
	accepts(t, first, addr)

	// A stale socket (its server died without removing it) is replaced.
	stale := filepath.Join(t.TempDir(), "stale.sock")
	l, err := net.Listen("unix", stale)
	require.NoError(t, err)
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	_, err = os.Lstat(stale)
	require.NoError(t, err, "the stale socket file is there")
	second, err := ipc.Listen(ctx, "unix:"+stale)
	require.NoError(t, err)
	accepts(t, second, "unix:"+stale)
	require.NoError(t, second.Close())
	_, err = os.Lstat(stale)
	require.ErrorIs(t, err, os.ErrNotExist, "a listener removes its socket file")

	// The path was taken over anyway (removed by hand, then listened on):
	// closing the first listener leaves the new socket file alone.
	require.NoError(t, os.Remove(path))
	third, err := ipc.Listen(ctx, addr)
	require.NoError(t, err)
	defer third.Close()
	require.NoError(t, first.Close())
	_, err = os.Lstat(path)
	require.NoError(t, err, "the first listener removed a socket file it did not create")
	accepts(t, third, addr)

	// Anything else at the path is left alone.
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, []byte("data"), 0o600))
	_, err = ipc.Listen(ctx, "unix:"+file)
	require.Error(t, err)
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Equal(t, "data", string(b))
}
