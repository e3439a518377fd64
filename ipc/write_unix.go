package ipc

import "syscall"

// throughWriter makes a connection's non-blocking writes (see writeThrough)
// without allocating a closure for each: its write method is bound once.
// One write at a time (Conn.writing).
type throughWriter struct {
	raw   syscall.RawConn
	b     []byte
	n     int
	write func(fd uintptr) bool
}

func newThroughWriter(raw syscall.RawConn) *throughWriter {
	w := &throughWriter{raw: raw}
	w.write = func(fd uintptr) bool {
		w.n, _ = syscall.Write(int(fd), w.b)
		return true // one attempt: never wait for the socket
	}
	return w
}

// try makes one non-blocking write of b to the socket and returns how much
// of it was written: 0 on any error (EAGAIN, a closed socket, an expired
// write deadline), which leaves the frame to the writer goroutine, whose
// blocking write reports the error if there is one.
func (w *throughWriter) try(b []byte) int {
	w.b, w.n = b, 0
	err := w.raw.Write(w.write)
	w.b = nil
	if err != nil || w.n < 0 {
		return 0
	}
	return w.n
}
