package ipc

import (
	"context"
	"io/fs"
	"net"
	"os"
	"sync"
	"syscall"
)

// umaskMu serialises the umask change around creating a Unix socket, so that
// the socket file is created 0600 rather than chmod-ed after a window in which
// others could connect. The umask is process-wide state.
var umaskMu sync.Mutex

func listenUnix(ctx context.Context, lc *net.ListenConfig, path string) (net.Listener, error) {
	umaskMu.Lock()
	old := syscall.Umask(0o177)
	l, err := lc.Listen(ctx, "unix", path)
	syscall.Umask(old)
	umaskMu.Unlock()
	return l, err
}

// removeStaleSocket removes a socket file left by a previous server; it never
// removes anything that is not a socket.
func removeStaleSocket(path string) {
	if st, err := os.Lstat(path); err == nil && st.Mode()&fs.ModeSocket != 0 {
		os.Remove(path)
	}
}
