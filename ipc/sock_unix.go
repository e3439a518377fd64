package ipc

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// umaskMu serialises the umask change around creating a Unix socket, so that
// the socket file is created 0600 rather than chmod-ed after a window in which
// others could connect. The umask is process-wide state.
var umaskMu sync.Mutex

// listenUnix listens on a Unix socket at path, created 0600. A live server
// already listening there is left alone (an error); a stale socket file, one
// nobody listens on, is replaced; any other file is left alone (an error).
// Closing the listener removes the socket file only if it is still the one
// this listener created.
func listenUnix(ctx context.Context, lc *net.ListenConfig, path string) (net.Listener, error) {
	if err := removeStaleSocket(ctx, path); err != nil {
		return nil, err
	}
	umaskMu.Lock()
	old := syscall.Umask(0o177)
	l, err := lc.Listen(ctx, "unix", path)
	syscall.Umask(old)
	umaskMu.Unlock()
	if err != nil {
		return nil, err
	}
	ul := l.(*net.UnixListener)
	st, err := os.Lstat(path)
	if err != nil {
		ul.Close()
		return nil, err
	}
	ul.SetUnlinkOnClose(false)
	return &unixListener{UnixListener: ul, path: path, file: st}, nil
}

// unixListener removes its socket file when it is closed, unless another
// file has taken the path since (another server's socket, say).
type unixListener struct {
	*net.UnixListener
	path string
	file fs.FileInfo // the socket file created
	once sync.Once
}

func (l *unixListener) Close() error {
	err := l.UnixListener.Close()
	l.once.Do(func() {
		if st, serr := os.Lstat(l.path); serr == nil && os.SameFile(st, l.file) {
			os.Remove(l.path)
		}
	})
	return err
}

// removeStaleSocket removes a socket file that no server listens on. It
// refuses to touch a socket a server answers on, and anything that is not a
// socket is left for listening to fail on.
func removeStaleSocket(ctx context.Context, path string) error {
	st, err := os.Lstat(path)
	if err != nil || st.Mode()&fs.ModeSocket == 0 {
		return nil
	}
	d := net.Dialer{Timeout: time.Second}
	nc, err := d.DialContext(ctx, "unix", path)
	if err == nil {
		nc.Close()
		return fmt.Errorf("a server is already listening on %s", path)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("%s is a socket that may be in use: %w", path, err)
	}
	os.Remove(path)
	return nil
}
