package ipc

// SocketReads counts the read system calls the connection's reader made on
// its socket.
func (c *Conn) SocketReads() int64 { return c.reads.Load() }
