// Package sdk is the Go agent SDK: it connects to an Arena server over a Unix
// or TCP socket (docs/protocol.md), says hello, receives observations, sends
// decisions and mid-turn queries, and reconnects with backoff when the
// connection drops. An agent is anything with Decide, the same interface the
// server's built-in bots implement:
//
//	c, err := sdk.Connect(ctx, "unix:arena.sock", sdk.Options{})
//	res, err := c.Run(ctx, sdk.AgentFunc(func(obs *sdk.Observation) sdk.Decision {
//		return sdk.Idle()
//	}))
package sdk

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/world"
	"github.com/fxamacker/cbor/v2"
)

// Observation is what the agent perceives at a decision point.
type Observation = world.Observation

// Decision is what the agent does: a tool, its parameters and, optionally, why.
type Decision = world.Decision

// Idle is the decision to take no new action this tick.
func Idle() Decision { return Decision{Tool: "idle"} }

// Agent decides from observations. The built-in bots implement it too.
type Agent interface {
	Decide(ctx context.Context, obs *Observation) Decision
}

// AgentFunc adapts a plain function to Agent.
type AgentFunc func(obs *Observation) Decision

// Decide implements Agent.
func (f AgentFunc) Decide(_ context.Context, obs *Observation) Decision { return f(obs) }

// Options configure a client. Zero values work.
type Options struct {
	Agent string // the slot to ask for; empty: any free slot
	Token string // required when the server was started with --tokens
	Name  string
	// MaxReconnects is how many times Run redials a dropped connection [5];
	// negative: never.
	MaxReconnects int
	Backoff       time.Duration // first wait before redialling, doubled each time [200ms]
	Log           *slog.Logger
}

// ServerError is an error message the server sent.
type ServerError struct {
	Code    string
	Message string
	Fatal   bool
}

func (e *ServerError) Error() string { return fmt.Sprintf("server: %s: %s", e.Code, e.Message) }

// Client is one agent's connection to a server.
type Client struct {
	addr    string
	opt     Options
	codec   *ipc.Codec
	welcome ipc.Welcome

	mu      sync.Mutex
	nc      net.Conn
	nextID  int
	pending map[string]chan ipc.Result

	obs  chan observation
	end  chan map[string]any
	errs chan error
	dead chan struct{}
}

type observation struct {
	tick int
	obs  *Observation
}

// Connect dials addr ("unix:PATH" or "tcp:HOST:PORT"), says hello and waits
// for the welcome. A refusal is a *ServerError.
func Connect(ctx context.Context, addr string, opt Options) (*Client, error) {
	if opt.MaxReconnects == 0 {
		opt.MaxReconnects = 5
	}
	if opt.Backoff <= 0 {
		opt.Backoff = 200 * time.Millisecond
	}
	if opt.Log == nil {
		opt.Log = slog.Default()
	}
	codec, err := ipc.NewCodec(ipc.Limits{MaxArrayElements: 1 << 16, MaxMapPairs: 1 << 16, MaxNestedLevels: 32})
	if err != nil {
		return nil, err
	}
	c := &Client{addr: addr, opt: opt, codec: codec}
	if err := c.connect(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Client) connect(ctx context.Context) error {
	nc, err := ipc.Dial(ctx, c.addr)
	if err != nil {
		return err
	}
	hello := map[string]any{"type": "hello", "protocol": ipc.ProtocolVersion, "role": "agent", "sdk": "go"}
	agent := c.opt.Agent
	if agent == "" {
		agent = c.welcome.AgentID // reclaim our slot when reconnecting
	}
	if agent != "" {
		hello["agent"] = agent
	}
	if c.opt.Token != "" {
		hello["token"] = c.opt.Token
	}
	if c.opt.Name != "" {
		hello["name"] = c.opt.Name
	}
	if err := c.write(nc, hello); err != nil {
		nc.Close()
		return err
	}
	nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	frame, err := ipc.ReadFrame(nc, 64<<20, nil)
	nc.SetReadDeadline(time.Time{})
	if err != nil {
		nc.Close()
		return fmt.Errorf("read welcome: %w", err)
	}
	var m map[string]any
	if err := cbor.Unmarshal(frame, &m); err != nil {
		nc.Close()
		return fmt.Errorf("decode welcome: %w", err)
	}
	if m["type"] == "error" {
		nc.Close()
		return serverError(m)
	}
	var w ipc.Welcome
	if err := cbor.Unmarshal(frame, &w); err != nil || w.Type != "welcome" {
		nc.Close()
		return fmt.Errorf("expected a welcome, got %v", m["type"])
	}
	c.mu.Lock()
	c.nc, c.welcome, c.pending = nc, w, map[string]chan ipc.Result{}
	c.mu.Unlock()
	c.obs = make(chan observation, 1)
	c.end = make(chan map[string]any, 1)
	c.errs = make(chan error, 16)
	c.dead = make(chan struct{})
	go c.readLoop(nc, c.obs, c.end, c.errs, c.dead)
	return nil
}

func serverError(m map[string]any) *ServerError {
	e := &ServerError{}
	e.Code, _ = m["code"].(string)
	e.Message, _ = m["message"].(string)
	e.Fatal, _ = m["fatal"].(bool)
	return e
}

// Welcome is the server's welcome: the agent id, scenario, tools, objective.
func (c *Client) Welcome() ipc.Welcome { return c.welcome }

func (c *Client) write(nc net.Conn, v any) error {
	b, err := c.codec.Marshal(v)
	if err != nil {
		return err
	}
	nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
	return ipc.WriteFrame(nc, b)
}

func (c *Client) readLoop(nc net.Conn, obs chan observation, end chan map[string]any, errs chan error, dead chan struct{}) {
	defer close(dead)
	var buf []byte
	for {
		frame, err := ipc.ReadFrame(nc, 64<<20, buf)
		if err != nil {
			errs <- err
			return
		}
		buf = frame
		var m map[string]any
		if err := cbor.Unmarshal(frame, &m); err != nil {
			errs <- fmt.Errorf("decode %d-byte message: %w", len(frame), err)
			continue
		}
		switch m["type"] {
		case "observation":
			var msg struct {
				Tick        int          `cbor:"tick"`
				Observation *Observation `cbor:"observation"`
			}
			if err := cbor.Unmarshal(frame, &msg); err != nil {
				errs <- fmt.Errorf("decode observation: %w", err)
				continue
			}
			select { // newest wins
			case <-obs:
			default:
			}
			obs <- observation{msg.Tick, msg.Observation}
		case "result":
			var r ipc.Result
			if err := cbor.Unmarshal(frame, &r); err != nil {
				errs <- fmt.Errorf("decode result: %w", err)
				continue
			}
			var id any
			cbor.Unmarshal(r.ID, &id)
			key := fmt.Sprint(id)
			c.mu.Lock()
			ch := c.pending[key]
			delete(c.pending, key)
			c.mu.Unlock()
			if ch != nil {
				ch <- r
			}
		case "episode_end":
			end <- m
			return
		case "error":
			se := serverError(m)
			select {
			case errs <- se:
			default:
			}
			if se.Fatal {
				return
			}
		}
	}
}

// Query calls a query tool mid-turn and returns its data. A failed call is a
// *ServerError with the tool's error code.
func (c *Client) Query(ctx context.Context, tool string, params map[string]any) (map[string]any, error) {
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	ch := make(chan ipc.Result, 1)
	c.pending[strconv.Itoa(id)] = ch
	nc := c.nc
	c.mu.Unlock()
	if err := c.write(nc, map[string]any{"type": "query", "id": id, "tool": tool, "params": params}); err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		if !r.Success {
			return nil, &ServerError{Code: r.ErrorCode, Message: r.ErrorMessage}
		}
		return r.Data, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.dead:
		return nil, errors.New("connection closed while waiting for a query result")
	}
}

// Run answers every observation with the agent's decision until the episode
// ends, and returns the episode_end message (reason and results). A dropped
// connection is redialled with backoff, resuming the same slot.
func (c *Client) Run(ctx context.Context, agent Agent) (map[string]any, error) {
	reconnects := 0
	for {
		select {
		case o := <-c.obs:
			d := agent.Decide(ctx, o.obs)
			msg := map[string]any{"type": "decision", "tick": o.tick, "tool": d.Tool}
			if len(d.Params) > 0 {
				msg["params"] = d.Params
			}
			if d.Reasoning != "" {
				msg["reasoning"] = d.Reasoning
			}
			c.mu.Lock()
			nc := c.nc
			c.mu.Unlock()
			if err := c.write(nc, msg); err != nil {
				c.opt.Log.Warn("send decision", "err", err)
			}
		case m := <-c.end:
			c.Close()
			return m, nil
		case err := <-c.errs:
			var se *ServerError
			if errors.As(err, &se) && !se.Fatal {
				c.opt.Log.Warn("server error", "code", se.Code, "message", se.Message)
				continue
			}
			select {
			case m := <-c.end:
				c.Close()
				return m, nil
			default:
			}
			if errors.As(err, &se) || c.opt.MaxReconnects < 0 || reconnects >= c.opt.MaxReconnects {
				return nil, fmt.Errorf("connection to %s: %w", c.addr, err)
			}
			wait := c.opt.Backoff << reconnects
			reconnects++
			c.opt.Log.Warn("connection lost; reconnecting", "err", err, "in", wait)
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if err := c.connect(ctx); err != nil {
				c.errs = make(chan error, 1)
				c.errs <- err
			}
		case <-ctx.Done():
			c.Close()
			return nil, ctx.Err()
		}
	}
}

// Close says bye and closes the connection.
func (c *Client) Close() error {
	c.mu.Lock()
	nc := c.nc
	c.mu.Unlock()
	if nc == nil {
		return nil
	}
	c.write(nc, map[string]any{"type": "bye"})
	return nc.Close()
}
