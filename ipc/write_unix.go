package ipc

import "syscall"

// tryWrite makes one non-blocking write of b to a socket and returns how
// much of it was written: 0 on any error (EAGAIN, a closed socket, an expired
// write deadline), which leaves the frame to the writer goroutine, whose
// blocking write reports the error if there is one.
func tryWrite(raw syscall.RawConn, b []byte) int {
	n := 0
	err := raw.Write(func(fd uintptr) bool {
		n, _ = syscall.Write(int(fd), b)
		return true // one attempt: never wait for the socket
	})
	if err != nil || n < 0 {
		return 0
	}
	return n
}
