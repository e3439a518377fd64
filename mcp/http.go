package mcp

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/arena-sim/arena/ipc"
)

// HTTPOptions configure an HTTPBridge. Zero fields take the defaults in
// brackets.
type HTTPOptions struct {
	// Tokens are the server's slot tokens (slot id → token; the spectators'
	// entry is ignored). When set, every request must carry one as
	// "Authorization: Bearer TOKEN": the session plays that token's slot, and
	// a request without a valid token gets HTTP 401.
	Tokens map[string]string
	// SessionTimeout closes an MCP session, and frees its slot, after this
	// long without a request [10m].
	SessionTimeout time.Duration
	// ProgressEvery is how often a call that waits reports progress [1s].
	ProgressEvery time.Duration
	Log           *slog.Logger
}

// HTTPBridge serves MCP's Streamable HTTP transport for an arena server:
// each MCP session takes an agent slot of the server's episode through a
// connection on Listener, which the server accepts like any other, so MCP
// sessions, CBOR clients and built-in bots share one episode, in lockstep or
// in real time. A session that ends (DELETE, or SessionTimeout) frees its
// slot.
type HTTPBridge struct {
	opt      HTTPOptions
	log      *slog.Logger
	pipe     *pipeListener
	handler  *gomcp.StreamableHTTPHandler
	template *gomcp.Server // answers the SDK's checks of requests within sessions

	mu       sync.Mutex
	sessions map[string]*bridged // by Mcp-Session-Id
	closed   bool

	hs  *http.Server
	url string
}

// bridged is one MCP session and its seat.
type bridged struct {
	seat  *seat
	token string
	ss    *gomcp.ServerSession
}

type serverKey struct{}

// NewHTTPBridge builds a bridge; serve it (it is an http.Handler) at the MCP
// endpoint and pass Listener to the arena server.
func NewHTTPBridge(opt HTTPOptions) *HTTPBridge {
	if opt.SessionTimeout <= 0 {
		opt.SessionTimeout = 10 * time.Minute
	}
	b := &HTTPBridge{opt: opt, log: opt.Log, pipe: newPipeListener(), sessions: map[string]*bridged{}}
	if b.log == nil {
		b.log = slog.Default()
	}
	b.template = gomcp.NewServer(&gomcp.Implementation{Name: "arena", Version: Version},
		&gomcp.ServerOptions{SupportedProtocolVersions: ProtocolVersions})
	b.handler = gomcp.NewStreamableHTTPHandler(func(r *http.Request) *gomcp.Server {
		if srv, ok := r.Context().Value(serverKey{}).(*gomcp.Server); ok {
			return srv
		}
		return b.template
	}, &gomcp.StreamableHTTPOptions{SessionTimeout: opt.SessionTimeout})
	return b
}

// Listener is where the bridge's sessions connect to the arena server: give
// it to server.Serve beside the CBOR listeners.
func (b *HTTPBridge) Listener() net.Listener { return b.pipe }

// ListenHTTP listens on addr (tcp:HOST:PORT, loopback when HOST is empty, as
// for --listen) and serves a new bridge's endpoint at /mcp.
func ListenHTTP(ctx context.Context, addr string, opt HTTPOptions) (*HTTPBridge, error) {
	if !strings.HasPrefix(addr, "tcp:") {
		return nil, fmt.Errorf("mcp listen %q: want tcp:HOST:PORT", addr)
	}
	ln, err := ipc.Listen(ctx, addr)
	if err != nil {
		return nil, err
	}
	b := NewHTTPBridge(opt)
	mux := http.NewServeMux()
	mux.Handle("/mcp", b)
	b.hs = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	b.url = "http://" + ln.Addr().String() + "/mcp"
	go b.hs.Serve(ln)
	return b, nil
}

// URL is the MCP endpoint ListenHTTP serves.
func (b *HTTPBridge) URL() string { return b.url }

// Close ends every session (their slots are freed), lets the requests under
// way finish for a moment, and stops serving.
func (b *HTTPBridge) Close() error {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.pipe.Close()
	var err error
	if b.hs != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err = b.hs.Shutdown(ctx); errors.Is(err, context.DeadlineExceeded) {
			err = nil
		}
	}
	b.mu.Lock()
	all := make([]*bridged, 0, len(b.sessions))
	for _, s := range b.sessions {
		all = append(all, s)
	}
	b.mu.Unlock()
	for _, s := range all {
		s.ss.Close()
		s.seat.close()
	}
	if b.hs != nil {
		b.hs.Close()
	}
	return err
}

// ServeHTTP implements http.Handler: the MCP endpoint.
func (b *HTTPBridge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	token, ok := b.authorize(r)
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="arena"`)
		http.Error(w, "Unauthorized: this server needs an agent slot's token: Authorization: Bearer TOKEN", http.StatusUnauthorized)
		return
	}
	if id := r.Header.Get("Mcp-Session-Id"); id != "" {
		b.mu.Lock()
		s := b.sessions[id]
		b.mu.Unlock()
		if s != nil && b.opt.Tokens != nil && subtle.ConstantTimeCompare([]byte(s.token), []byte(token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="arena"`)
			http.Error(w, "Unauthorized: this session plays another slot than the token's", http.StatusUnauthorized)
			return
		}
		b.handler.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodPost {
		b.handler.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, "Bad Request: "+err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != "initialize" || !streamable(r) {
		// Not a session's start, or one the SDK will refuse: no slot for it
		// (taking the last one would start the episode).
		b.handler.ServeHTTP(w, r)
		return
	}
	b.initialize(w, r, token, msg.ID)
}

// streamable reports whether a POST has the headers the Streamable HTTP
// transport asks for: a JSON body, and JSON and event streams accepted.
func streamable(r *http.Request) bool {
	ct, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
	accept := strings.Join(r.Header.Values("Accept"), ",")
	anything := strings.Contains(accept, "*/*")
	return strings.TrimSpace(ct) == "application/json" && (anything ||
		(strings.Contains(accept, "application/json") && strings.Contains(accept, "text/event-stream")))
}

// authorize reads the request's bearer token: any token when the server has
// none, else one of an agent slot's.
func (b *HTTPBridge) authorize(r *http.Request) (string, bool) {
	token := ""
	if scheme, rest, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
		token = strings.TrimSpace(rest)
	}
	if b.opt.Tokens == nil {
		return "", true
	}
	valid := false
	for slot, t := range b.opt.Tokens {
		if slot != "spectator" && t != "" && subtle.ConstantTimeCompare([]byte(t), []byte(token)) == 1 {
			valid = true
		}
	}
	return token, valid
}

// initialize opens a session: it takes a slot of the server's episode, then
// lets the SDK answer the initialize request with that seat's MCP server. A
// refused slot is answered with an HTTP error carrying a JSON-RPC error.
func (b *HTTPBridge) initialize(w http.ResponseWriter, r *http.Request, token string, id json.RawMessage) {
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	nc, err := b.pipe.dial(ctx, r.RemoteAddr)
	var st *seat
	if err == nil {
		st, err = dialWire(ctx, nc, token, b.opt.ProgressEvery, b.log)
	}
	cancel()
	if err != nil {
		status, code := http.StatusServiceUnavailable, -32000
		var ce *callError
		switch {
		case errors.As(err, &ce) && ce.Code == ipc.CodeUnauthorized:
			status = http.StatusUnauthorized
		case errors.As(err, &ce):
			status = http.StatusConflict // NO_SLOT, SLOT_TAKEN: the slots are as they are
		default:
			err = fmt.Errorf("the arena server takes no agents now (%w)", err)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": err.Error()}})
		return
	}
	srv := newServer(st, b.log)
	b.handler.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), serverKey{}, srv)))
	var ss *gomcp.ServerSession
	for s := range srv.Sessions() {
		ss = s
	}
	b.mu.Lock()
	closed := b.closed
	if ss != nil && !closed {
		b.sessions[ss.ID()] = &bridged{seat: st, token: token, ss: ss}
	}
	b.mu.Unlock()
	if ss == nil || closed {
		st.close()
		return
	}
	b.log.Info("mcp session opened", "session", ss.ID(), "agent", st.agent, "remote", r.RemoteAddr)
	go func() {
		ss.Wait()
		st.close()
		b.mu.Lock()
		delete(b.sessions, ss.ID())
		b.mu.Unlock()
		b.log.Info("mcp session closed", "session", ss.ID(), "agent", st.agent)
	}()
}

// pipeListener is a net.Listener of in-memory connections: the bridge's
// side of each is a seat's wire.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

// Accept implements net.Listener.
func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close implements net.Listener.
func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr implements net.Listener.
func (l *pipeListener) Addr() net.Addr { return mcpAddr("mcp") }

// dial connects to the listener; the server sees remote, the HTTP client's
// address, as the connection's remote address.
func (l *pipeListener) dial(ctx context.Context, remote string) (net.Conn, error) {
	ours, theirs := net.Pipe()
	select {
	case l.conns <- &remoteConn{Conn: theirs, remote: mcpAddr("mcp:" + remote)}:
		return ours, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type mcpAddr string

func (a mcpAddr) Network() string { return "mcp" }
func (a mcpAddr) String() string  { return string(a) }

type remoteConn struct {
	net.Conn
	remote net.Addr
}

func (c *remoteConn) RemoteAddr() net.Addr { return c.remote }
