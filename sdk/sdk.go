// Package sdk is the Go agent SDK for Arena servers (docs/protocol.md). It
// connects over a Unix socket or TCP, says hello, receives typed observations,
// sends decisions and mid-turn queries, keeps the connection alive with pings
// and, when the connection drops, redials with backoff and takes back the same
// agent slot.
//
// An agent is anything with Decide: the same method the server's built-in
// bots (package bots) and the engine's controllers implement, so a built-in
// bot can play over the socket unchanged (see sdk/examples/forager).
//
//	c, err := sdk.Connect(ctx, "unix:arena.sock", sdk.Options{Token: token})
//	if err != nil {
//		return err // a refusal is a *sdk.ServerError: UNAUTHORIZED, NO_SLOT, ...
//	}
//	defer c.Close()
//	end, err := c.Run(ctx, sdk.AgentFunc(func(ctx context.Context, obs *sdk.Observation) sdk.Decision {
//		if len(obs.NearbyResources) == 0 {
//			return sdk.Idle()
//		}
//		r := obs.NearbyResources[0]
//		return sdk.Decision{Tool: "move_to", Params: map[string]any{"target": r.Position[:]}}
//	}))
//	if err != nil {
//		return err
//	}
//	fmt.Println(end.Reason, end.Results.MeanScore)
//
// # Queries
//
// A query tool (query_world, query_inventory) can be called in the middle of a
// turn, from inside Decide, without using up the decision. The context Run
// passes to Decide carries the client, so an agent needs no other handle:
//
//	func (a *scout) Decide(ctx context.Context, obs *sdk.Observation) sdk.Decision {
//		q, err := sdk.ClientFrom(ctx).QueryWorld(ctx, 20, "resource")
//		var se *sdk.ServerError
//		if errors.As(err, &se) && se.Code == "LIMIT_EXCEEDED" {
//			return sdk.Idle() // too many queries for this observation
//		}
//		...
//	}
//
// An agent that holds the *Client from Connect may call c.Query just as well;
// Query is safe for concurrent use. A refused query is a *ServerError carrying
// the tool's error code (NOT_A_QUERY, LIMIT_EXCEEDED, INVALID_PARAMS, DEAD, ...).
// In lockstep mode the context passed to Decide expires at the observation's
// deadline.
//
// # Episodes and death
//
// A server may play several episodes in one session. Run plays them all and
// returns the last episode_end: the one marked Final, or, from a server that
// does not mark it, the one after which the server closed the connection. An
// agent that keeps state between observations can implement EpisodeObserver
// to be told where episodes begin and end. When the agent dies the server
// sends one last observation with Alive false; Run does not pass it to
// Decide, and keeps the connection alive with pings until the episode ends.
//
// # Reconnection
//
// When the connection drops in the middle of an episode, Run redials with
// backoff (Options.Backoff, MaxBackoff, MaxReconnects) and says hello for the
// slot it was given, with the same token, even when the first hello asked for
// any free slot. SLOT_TAKEN (the server has not yet noticed the old
// connection ended) is retried; other refusals end Run. A query waiting for
// its result when the connection drops fails; call it again.
//
// # Errors
//
// Everything the server refuses is a *ServerError with the server's code and
// message: a refused hello (from Connect, or from a redial in Run), a failed
// query, a protocol error. Non-fatal protocol errors (DUPLICATE_DECISION,
// UNKNOWN_TICK, BAD_MESSAGE, ...) do not stop Run: they are logged and passed
// to Options.OnError. A fatal one ends Run with the *ServerError, except
// SLOW_CONSUMER, after which Run reconnects.
package sdk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/world"
	"github.com/fxamacker/cbor/v2"
)

// Version is the SDK's version, sent in hello as "arena-go/<Version>".
const Version = "0.1"

// The protocol's types, under the SDK's names.
type (
	// Observation is what the agent perceives at a decision point.
	Observation = world.Observation
	// Decision is what the agent does: a tool, its parameters and, optionally,
	// why. A zero Decision is sent as idle.
	Decision = world.Decision
	// Welcome is the server's answer to hello: the agent id, scenario, mode,
	// tools and objective.
	Welcome = ipc.Welcome
	// EpisodeStart says an episode has begun (episode number, seed, objective).
	EpisodeStart = ipc.EpisodeStart
	// EpisodeEnd says an episode is over, with its reason and Results. Final
	// says no episode follows.
	EpisodeEnd = ipc.EpisodeEnd
	// Results are an episode's results, as in results.json.
	Results = engine.Results
	// QueryResult answers query_world.
	QueryResult = world.QueryResult
	// InventoryDetails answers query_inventory.
	InventoryDetails = world.InventoryDetails
)

// Idle is the decision to take no new action (a move in progress goes on).
func Idle() Decision { return Decision{Tool: "idle"} }

// Agent decides from observations. It is the interface of the built-in bots
// (bots.Bot) and of the engine's controllers (engine.Controller).
//
// Run calls Decide for every observation of a living agent, one at a time, on
// the goroutine that called Run. ctx carries the client (see ClientFrom) and,
// in lockstep mode, the observation's deadline.
type Agent interface {
	Decide(ctx context.Context, obs *Observation) Decision
}

// AgentFunc adapts a function to Agent.
type AgentFunc func(ctx context.Context, obs *Observation) Decision

// Decide implements Agent.
func (f AgentFunc) Decide(ctx context.Context, obs *Observation) Decision { return f(ctx, obs) }

// EpisodeObserver is an Agent that wants to know where episodes begin and
// end, to reset what it remembers, say. Run calls both methods on the
// goroutine that calls Decide:
//
//   - StartEpisode before the first observation of every episode. When the
//     server sends no episode_start (older servers), it is made from the
//     welcome: episode, seed, tick and objective.
//   - EndEpisode with every episode_end, the last one included.
//
// A reconnection within an episode does not start a new one.
type EpisodeObserver interface {
	Agent
	StartEpisode(ctx context.Context, e *EpisodeStart)
	EndEpisode(ctx context.Context, e *EpisodeEnd)
}

// Options configure a client. Zero values take the defaults in brackets.
type Options struct {
	// Agent is the slot to ask for, e.g. "agent_001" [any free slot]. After a
	// reconnection the client always asks for the slot it was given.
	Agent string
	// Token is the slot's token, when the server was started with --tokens.
	Token string
	// Name is a display name sent in hello.
	Name string
	// MaxReconnects is how many times in a row Run redials a dropped
	// connection before it gives up [5]; negative: never redial.
	MaxReconnects int
	// Backoff is the wait before the first redial, doubled after each failed
	// one up to MaxBackoff [200ms, 5s].
	Backoff, MaxBackoff time.Duration
	// KeepAlive is the longest the client stays silent: it sends a ping when
	// it has sent nothing for half of it [10s]; negative: never ping. The
	// client also answers the server's pings, which is enough to stay
	// connected while it waits for the episode to start, thinks, or is dead.
	KeepAlive time.Duration
	// OnError is called with each non-fatal error the server sends
	// (DUPLICATE_DECISION, UNKNOWN_TICK, BAD_MESSAGE, ...), on the goroutine
	// that runs Run, between decisions. Such errors are logged either way.
	OnError func(*ServerError)
	// Log receives the client's warnings and information [slog.Default()].
	Log *slog.Logger
}

// ServerError is what the server answered: a protocol error message, a
// refused hello, or a failed query.
type ServerError struct {
	Code    string // e.g. UNAUTHORIZED, SLOT_TAKEN, LIMIT_EXCEEDED, NOT_A_QUERY
	Message string // the server's explanation, for a person or a model
	Fatal   bool   // the server closed the connection after it
	Tool    string // for a failed query: the tool called
	// Data is what a failed query's result carried besides the error, such
	// as a tool's own error envelope ({"status":"error","result":...}).
	Data map[string]any
}

func (e *ServerError) Error() string {
	if e.Tool != "" {
		return fmt.Sprintf("query %s: server answered %s: %s", e.Tool, e.Code, e.Message)
	}
	return fmt.Sprintf("server answered %s: %s", e.Code, e.Message)
}

// ErrClosed is returned by Run and Query after Close.
var ErrClosed = errors.New("sdk: client closed")

// maxFrame bounds the frames the client accepts; the server does not limit
// its own frames (a welcome with many tools can be large).
const maxFrame = 64 << 20

var decMode = func() cbor.DecMode {
	dm, err := cbor.DecOptions{
		MaxNestedLevels:   64,
		MaxArrayElements:  1 << 20,
		MaxMapPairs:       1 << 20,
		DefaultMapType:    reflect.TypeOf(map[string]any(nil)),
		FieldNameMatching: cbor.FieldNameMatchingCaseSensitive,
	}.DecMode()
	if err != nil {
		panic(err)
	}
	return dm
}()

var encMode = func() cbor.EncMode {
	em, err := cbor.CoreDetEncOptions().EncMode()
	if err != nil {
		panic(err)
	}
	return em
}()

// Client → server messages, with the field types the server expects.
type (
	helloMsg struct {
		Type     string `cbor:"type"`
		Protocol int    `cbor:"protocol"`
		Role     string `cbor:"role"`
		Agent    string `cbor:"agent,omitempty"`
		Token    string `cbor:"token,omitempty"`
		Name     string `cbor:"name,omitempty"`
		SDK      string `cbor:"sdk,omitempty"`
	}
	decisionMsg struct {
		Type      string         `cbor:"type"`
		Tick      int            `cbor:"tick"`
		Tool      string         `cbor:"tool"`
		Params    map[string]any `cbor:"params,omitempty"`
		Reasoning string         `cbor:"reasoning,omitempty"`
	}
	queryMsg struct {
		Type   string         `cbor:"type"`
		ID     uint64         `cbor:"id"`
		Tool   string         `cbor:"tool"`
		Params map[string]any `cbor:"params,omitempty"`
	}
	pongMsg struct {
		Type string          `cbor:"type"`
		ID   cbor.RawMessage `cbor:"id,omitempty"`
	}
	typeOnly struct {
		Type string `cbor:"type"`
	}
)

// inbound is any server message, decoded in one pass: the fields of every
// message an agent receives, each set only by the messages that have it.
type inbound struct {
	Type string `cbor:"type"`
	// observation, episode_start, episode_end
	Tick        int          `cbor:"tick"`
	DeadlineMS  int          `cbor:"deadline_ms"`
	Observation *Observation `cbor:"observation"`
	AgentsLeft  []string     `cbor:"agents_left"`
	// result, pong, ping
	ID           cbor.RawMessage `cbor:"id"`
	Success      bool            `cbor:"success"`
	Data         cbor.RawMessage `cbor:"data"`
	ErrorCode    string          `cbor:"error_code"`
	ErrorMessage string          `cbor:"error_message"`
	// error
	Code    string `cbor:"code"`
	Message string `cbor:"message"`
	Fatal   bool   `cbor:"fatal"`
	// episode_start, episode_end (and welcome)
	Episode   int              `cbor:"episode"`
	EpisodeID string           `cbor:"episode_id"`
	Seed      uint64           `cbor:"seed"`
	Objective *world.Objective `cbor:"objective"`
	Reason    string           `cbor:"reason"`
	Final     bool             `cbor:"final"`
	Results   *engine.Results  `cbor:"results"`
	AgentIDs  []string         `cbor:"agent_ids"` // and welcome

	received time.Time // when an observation was read, for its deadline
}

func (m *inbound) serverError() *ServerError {
	return &ServerError{Code: m.Code, Message: m.Message, Fatal: m.Fatal}
}

// session is one connection: its reader's output and its pending queries.
type session struct {
	nc        net.Conn
	welcome   Welcome
	roster    ipc.Roster   // the reader's: fills observations' AgentIDs
	lastWrite atomic.Int64 // unix nanoseconds

	wmu sync.Mutex // one frame at a time

	mu      sync.Mutex
	queue   []*inbound // observations, episode messages and errors, in order
	pending map[uint64]chan *inbound
	err     error // why the connection ended; set before done is closed

	wake chan struct{} // something was queued
	done chan struct{} // the reader stopped
}

// Client is one agent's connection to a server. Its methods are safe for
// concurrent use, except that Run must not run twice at once.
type Client struct {
	addr string
	opt  Options
	log  *slog.Logger
	ids  atomic.Uint64

	mu     sync.Mutex
	s      *session
	slot   string // the slot to ask for when redialling
	closed bool
}

// Connect dials addr ("unix:PATH" or "tcp:HOST:PORT"), says hello and waits
// for the welcome. A refusal (UNAUTHORIZED, NO_SLOT, SLOT_TAKEN,
// UNSUPPORTED_PROTOCOL) is a *ServerError.
func Connect(ctx context.Context, addr string, opt Options) (*Client, error) {
	if opt.MaxReconnects == 0 {
		opt.MaxReconnects = 5
	}
	if opt.Backoff <= 0 {
		opt.Backoff = 200 * time.Millisecond
	}
	if opt.MaxBackoff <= 0 {
		opt.MaxBackoff = 5 * time.Second
	}
	if opt.KeepAlive == 0 {
		opt.KeepAlive = 10 * time.Second
	}
	c := &Client{addr: addr, opt: opt, log: opt.Log, slot: opt.Agent}
	if c.log == nil {
		c.log = slog.Default()
	}
	if err := c.dial(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// dial opens a session: hello, then the welcome (or the refusal).
func (c *Client) dial(ctx context.Context) error {
	nc, err := ipc.Dial(ctx, c.addr)
	if err != nil {
		return err
	}
	c.mu.Lock()
	hello := helloMsg{Type: "hello", Protocol: ipc.ProtocolVersion, Role: "agent", Agent: c.slot,
		Token: c.opt.Token, Name: c.opt.Name, SDK: "arena-go/" + Version}
	c.mu.Unlock()
	s := &session{nc: nc, pending: map[uint64]chan *inbound{}, wake: make(chan struct{}, 1), done: make(chan struct{})}
	// Give up on the welcome when ctx ends, or after 30 seconds.
	nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	stop := context.AfterFunc(ctx, func() { nc.SetReadDeadline(time.Unix(1, 0)) })
	w, err := c.handshake(s, hello)
	if !stop() && err == nil {
		err = ctx.Err() // ctx ended as the welcome came: the deadline may be set
	}
	if err != nil {
		nc.Close()
		if ctx.Err() != nil {
			return fmt.Errorf("connect to %s: %w", c.addr, ctx.Err())
		}
		return err
	}
	nc.SetReadDeadline(time.Time{})
	s.welcome = w
	s.roster.Reset(w.AgentIDs)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		nc.Close()
		return ErrClosed
	}
	c.s = s
	if w.AgentID != "" {
		c.slot = w.AgentID // ask for this slot when redialling
	}
	c.mu.Unlock()
	go c.readLoop(s)
	if c.opt.KeepAlive > 0 {
		go s.keepAlive(c.opt.KeepAlive)
	}
	return nil
}

// handshake sends hello and reads the answer: a welcome, or a refusal.
func (c *Client) handshake(s *session, hello helloMsg) (Welcome, error) {
	if err := s.write(hello); err != nil {
		return Welcome{}, fmt.Errorf("send hello to %s: %w", c.addr, err)
	}
	for {
		frame, err := ipc.ReadFrame(s.nc, maxFrame, nil)
		if err != nil {
			return Welcome{}, fmt.Errorf("wait for welcome from %s: %w", c.addr, err)
		}
		var m inbound
		if err := decMode.Unmarshal(frame, &m); err != nil {
			return Welcome{}, fmt.Errorf("decode the answer to hello from %s: %w", c.addr, err)
		}
		switch m.Type {
		case "error":
			return Welcome{}, m.serverError()
		case "welcome":
			var w Welcome
			if err := decMode.Unmarshal(frame, &w); err != nil {
				return Welcome{}, fmt.Errorf("decode welcome from %s: %w", c.addr, err)
			}
			return w, nil
		}
	}
}

// Welcome is the server's latest welcome (a reconnection brings a new one).
func (c *Client) Welcome() Welcome {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.s.welcome
}

// AgentID is the slot this client plays.
func (c *Client) AgentID() string { return c.Welcome().AgentID }

func (c *Client) session() *session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.s
}

func (s *session) write(v any) error {
	b, err := encMode.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %T: %w", v, err)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if err := ipc.WriteFrame(s.nc, b); err != nil {
		return err
	}
	s.lastWrite.Store(time.Now().UnixNano())
	return nil
}

func (s *session) keepAlive(every time.Duration) {
	t := time.NewTicker(every / 2)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
			if time.Since(time.Unix(0, s.lastWrite.Load())) >= every/2 {
				s.write(typeOnly{Type: "ping"})
			}
		}
	}
}

// push queues a message for Run. An observation replaces one still waiting:
// the agent answers the newest.
func (s *session) push(m *inbound) {
	s.mu.Lock()
	if m.Type == "observation" {
		s.queue = slices.DeleteFunc(s.queue, func(q *inbound) bool { return q.Type == "observation" })
	}
	s.queue = append(s.queue, m)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *session) next() *inbound {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return nil
	}
	m := s.queue[0]
	s.queue[0] = nil
	s.queue = s.queue[1:]
	return m
}

func (s *session) end() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (c *Client) readLoop(s *session) {
	var err error
	defer func() {
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
		s.nc.Close()
		close(s.done)
	}()
	var buf []byte
	for {
		var frame []byte
		frame, err = ipc.ReadFrame(s.nc, maxFrame, buf)
		if err != nil {
			return
		}
		buf = frame // decoded values never alias the frame: it can be reused
		m := new(inbound)
		if derr := decMode.Unmarshal(frame, m); derr != nil {
			switch m.Type {
			case "observation", "result", "error", "episode_start", "episode_end":
				c.log.Error("arena: cannot decode a message from the server", "type", m.Type, "bytes", len(frame), "err", derr)
			} // a message type this SDK does not know: ignored
			continue
		}
		switch m.Type {
		case "observation":
			if m.Observation == nil {
				c.log.Error("arena: observation message without an observation", "tick", m.Tick)
				continue
			}
			m.received = time.Now()
			s.roster.Observe(m.Observation, m.AgentsLeft)
			s.push(m)
		case "episode_start":
			s.roster.Reset(m.AgentIDs)
			s.push(m)
		case "episode_end":
			s.push(m)
		case "result":
			var id uint64
			if decMode.Unmarshal(m.ID, &id) != nil {
				continue // not one of ours
			}
			s.mu.Lock()
			ch := s.pending[id]
			delete(s.pending, id)
			s.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		case "error":
			if m.Fatal {
				err = m.serverError()
				return
			}
			s.push(m)
		case "ping": // the server checks that we are alive
			go s.write(pongMsg{Type: "pong", ID: m.ID})
		}
	}
}

// ClientFrom returns the client whose Run passed ctx to Decide, or nil. Its
// Query methods return an error when the client is nil.
func ClientFrom(ctx context.Context) *Client {
	c, _ := ctx.Value(clientKey{}).(*Client)
	return c
}

type clientKey struct{}

// Query calls a query tool mid-turn and returns its data, e.g.
// {"query_result": {...}} for query_world. It does not use up the decision;
// at most the scenario's tool_call_limit queries (default 10, failed ones
// included) may be made per observation. A refused call is a *ServerError
// with the tool's error code: NOT_A_QUERY, LIMIT_EXCEEDED, INVALID_PARAMS,
// UNKNOWN_TOOL, DEAD...
func (c *Client) Query(ctx context.Context, tool string, params map[string]any) (map[string]any, error) {
	r, err := c.query(ctx, tool, params)
	if err != nil {
		return nil, err
	}
	var data map[string]any
	if len(r.Data) > 0 {
		if err := decMode.Unmarshal(r.Data, &data); err != nil {
			return nil, fmt.Errorf("query %s: decode data: %w", tool, err)
		}
	}
	return data, nil
}

// QueryWorld calls query_world: the entities within radius (0: the
// scenario's default), only of filterType when it is not empty ("resource",
// "hazard", "agent", "station", "obstacle", "capture_point").
func (c *Client) QueryWorld(ctx context.Context, radius float64, filterType string) (*QueryResult, error) {
	params := map[string]any{}
	if radius > 0 {
		params["radius"] = radius
	}
	if filterType != "" {
		params["filter_type"] = filterType
	}
	var out struct {
		QueryResult *QueryResult `cbor:"query_result"`
	}
	if err := c.queryInto(ctx, "query_world", params, &out); err != nil {
		return nil, err
	}
	if out.QueryResult == nil {
		return nil, errors.New("query query_world: the result has no query_result")
	}
	return out.QueryResult, nil
}

// QueryInventory calls query_inventory: every item with its count and type,
// and the capacity.
func (c *Client) QueryInventory(ctx context.Context) (*InventoryDetails, error) {
	var out struct {
		InventoryDetails *InventoryDetails `cbor:"inventory_details"`
	}
	if err := c.queryInto(ctx, "query_inventory", nil, &out); err != nil {
		return nil, err
	}
	if out.InventoryDetails == nil {
		return nil, errors.New("query query_inventory: the result has no inventory_details")
	}
	return out.InventoryDetails, nil
}

func (c *Client) queryInto(ctx context.Context, tool string, params map[string]any, out any) error {
	r, err := c.query(ctx, tool, params)
	if err != nil {
		return err
	}
	if err := decMode.Unmarshal(r.Data, out); err != nil {
		return fmt.Errorf("query %s: decode data: %w", tool, err)
	}
	return nil
}

func (c *Client) query(ctx context.Context, tool string, params map[string]any) (*inbound, error) {
	if c == nil {
		return nil, fmt.Errorf("query %s: no client (sdk.ClientFrom is only set in the context Run passes to Decide)", tool)
	}
	c.mu.Lock()
	s, closed := c.s, c.closed
	c.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	id := c.ids.Add(1)
	ch := make(chan *inbound, 1)
	s.mu.Lock()
	s.pending[id] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.pending, id)
		s.mu.Unlock()
	}()
	if err := s.write(queryMsg{Type: "query", ID: id, Tool: tool, Params: params}); err != nil {
		return nil, fmt.Errorf("query %s: %w", tool, err)
	}
	select {
	case r := <-ch:
		if !r.Success {
			se := &ServerError{Code: r.ErrorCode, Message: r.ErrorMessage, Tool: tool}
			if len(r.Data) > 0 {
				decMode.Unmarshal(r.Data, &se.Data) // best effort: the error stands without it
			}
			return nil, se
		}
		return r, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("query %s: %w", tool, ctx.Err())
	case <-s.done:
		return nil, fmt.Errorf("query %s: the connection ended before the result came: %w", tool, s.end())
	}
}

// Run plays until the server ends the session: it answers every observation
// of the living agent with agent.Decide (an observation with Alive false,
// sent when the agent dies, is not passed to Decide), tells an
// EpisodeObserver where episodes begin and end, and returns the last
// episode_end: the one marked Final, or the one after which the server closed
// the connection. A dropped connection is redialled with backoff, asking for
// the same slot. Run returns a *ServerError when the server ends the session
// with a fatal error, and ctx's error (after saying bye) when ctx ends.
func (c *Client) Run(ctx context.Context, agent Agent) (*EpisodeEnd, error) {
	r := &runner{c: c, agent: agent, ctx: context.WithValue(ctx, clientKey{}, c)}
	r.observer, _ = agent.(EpisodeObserver)
	failures := 0
	for {
		s := c.session()
		end, err := r.play(s)
		if end != nil || err != nil {
			c.Close()
			return end, err
		}
		if r.progressed {
			failures = 0
		}
		// The connection dropped: redial.
		cause := s.end()
		for {
			if c.opt.MaxReconnects < 0 || failures >= c.opt.MaxReconnects {
				c.Close()
				return nil, fmt.Errorf("connection to %s lost (%v); gave up after %d reconnection attempts", c.addr, cause, failures)
			}
			wait := min(c.opt.Backoff<<failures, c.opt.MaxBackoff)
			failures++
			c.log.Warn("arena: connection lost; reconnecting", "addr", c.addr, "agent", c.AgentID(), "err", cause, "in", wait)
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				c.Close()
				return nil, ctx.Err()
			}
			err := c.dial(ctx)
			if err == nil {
				c.log.Info("arena: reconnected", "agent", c.AgentID())
				break
			}
			var se *ServerError
			switch {
			case errors.Is(err, ErrClosed):
				return nil, err
			case ctx.Err() != nil:
				c.Close()
				return nil, ctx.Err()
			case errors.As(err, &se) && se.Code != ipc.CodeSlotTaken && se.Code != ipc.CodeServerBusy:
				// SLOT_TAKEN: the server has not yet noticed the old
				// connection ended; SERVER_BUSY: it is at its connection
				// limits for now. Anything else will not change.
				c.Close()
				return nil, fmt.Errorf("reconnect to %s: %w", c.addr, err)
			}
			cause = err
		}
	}
}

type runner struct {
	c        *Client
	agent    Agent
	observer EpisodeObserver
	ctx      context.Context // carries the client

	inEpisode  bool        // between a start (or the first observation) and an end
	episode    int         // the current or last episode
	last       *EpisodeEnd // the last episode_end
	ended      bool        // the last message was an episode_end
	dead       bool        // the agent died this episode
	progressed bool        // the session delivered something after its welcome
}

// play handles one session's messages until it ends. It returns the final
// episode_end, or an error that ends Run, or neither when the connection
// dropped and should be redialled.
func (r *runner) play(s *session) (*EpisodeEnd, error) {
	r.progressed = false
	for {
		m := s.next()
		if m == nil {
			select {
			case <-s.wake:
				continue
			case <-s.done:
				if m = s.next(); m == nil {
					return r.sessionEnded(s)
				}
			case <-r.ctx.Done():
				return nil, r.ctx.Err()
			}
		}
		r.progressed = true
		if end := r.handle(s, m); end != nil {
			return end, nil
		}
	}
}

// sessionEnded decides what the end of a connection means.
func (r *runner) sessionEnded(s *session) (*EpisodeEnd, error) {
	r.c.mu.Lock()
	closed := r.c.closed
	r.c.mu.Unlock()
	err := s.end()
	var se *ServerError
	switch {
	case r.ctx.Err() != nil:
		return nil, r.ctx.Err()
	case closed:
		return nil, ErrClosed
	case r.ended && errors.Is(err, io.EOF):
		// The server closed the session right after an episode_end: that
		// was the last episode (servers that do not send final).
		return r.last, nil
	case errors.As(err, &se) && se.Code != ipc.CodeSlowConsumer:
		return nil, fmt.Errorf("connection to %s: %w", r.c.addr, se)
	}
	return nil, nil
}

func (r *runner) handle(s *session, m *inbound) *EpisodeEnd {
	switch m.Type {
	case "observation":
		r.ended = false
		if !r.inEpisode || s.welcome.Episode > r.episode {
			// No episode_start came: make it from the welcome.
			r.start(&EpisodeStart{Type: "episode_start", Episode: s.welcome.Episode, EpisodeID: s.welcome.EpisodeID, Seed: s.welcome.Seed,
				Tick: s.welcome.Tick, Objective: s.welcome.Objective})
		}
		r.decide(s, m)
	case "episode_start":
		r.ended = false
		if r.inEpisode && m.Episode == r.episode {
			return nil // a reconnection within the episode: nothing new starts
		}
		objective := world.Objective{}
		if m.Objective != nil {
			objective = *m.Objective
		}
		r.start(&EpisodeStart{Type: m.Type, Episode: m.Episode, EpisodeID: m.EpisodeID, Seed: m.Seed, Tick: m.Tick, Objective: objective})
	case "episode_end":
		end := &EpisodeEnd{Type: m.Type, Episode: m.Episode, Tick: m.Tick, Reason: m.Reason, Final: m.Final, Results: m.Results, Observation: m.Observation}
		r.inEpisode, r.ended, r.last = false, true, end
		r.c.log.Info("arena: episode ended", "agent", s.welcome.AgentID, "episode", end.Episode, "tick", end.Tick,
			"reason", end.Reason, "final", end.Final)
		if r.observer != nil {
			r.observer.EndEpisode(r.ctx, end)
		}
		if end.Final {
			return end
		}
	case "error":
		se := m.serverError()
		r.c.log.Warn("arena: server error", "agent", s.welcome.AgentID, "code", se.Code, "message", se.Message)
		if r.c.opt.OnError != nil {
			r.c.opt.OnError(se)
		}
	}
	return nil
}

func (r *runner) start(e *EpisodeStart) {
	r.inEpisode, r.episode, r.dead = true, e.Episode, false
	if r.observer != nil {
		r.observer.StartEpisode(r.ctx, e)
	}
}

func (r *runner) decide(s *session, m *inbound) {
	obs := m.Observation
	if !obs.Alive {
		if !r.dead {
			r.dead = true
			r.c.log.Info("arena: the agent died", "agent", obs.AgentID, "tick", obs.Tick)
		}
		return
	}
	ctx, cancel := r.ctx, context.CancelFunc(nil)
	if m.DeadlineMS > 0 {
		ctx, cancel = context.WithDeadline(ctx, m.received.Add(time.Duration(m.DeadlineMS)*time.Millisecond))
	}
	d := r.agent.Decide(ctx, obs)
	if cancel != nil {
		cancel()
	}
	if d.Tool == "" {
		d.Tool = "idle"
	}
	if err := s.write(decisionMsg{Type: "decision", Tick: m.Tick, Tool: d.Tool, Params: d.Params, Reasoning: d.Reasoning}); err != nil {
		r.c.log.Warn("arena: send decision", "agent", obs.AgentID, "tick", m.Tick, "err", err)
	}
}

// Close says bye and closes the connection. Run, if running, returns
// ErrClosed.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	s := c.s
	c.mu.Unlock()
	select {
	case <-s.done:
		return nil
	default:
	}
	s.write(typeOnly{Type: "bye"})
	return s.nc.Close()
}
