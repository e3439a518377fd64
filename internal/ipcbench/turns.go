package ipcbench

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"runtime/pprof"
	"time"

	"github.com/arena-sim/arena/ipc"
)

// Turns measures the lockstep server and the echo in one run, taking turns
// of opt.Turns rounds, so that the host's swings over seconds, which move
// two runs one after the other by a tenth or more, slow both alike (as
// BenchmarkDensity and `arena bench --against` do for worlds).
//
// Both servers and both sets of clients are up at once; the side whose turn
// it is not waits with every client holding the observation it has just
// read, its server waiting for the decisions: neither uses a core. The
// lockstep side first plays opt.Turns rounds unmeasured, whose last
// observations are the frames the echo sends. Then the turns go lockstep,
// echo, echo, lockstep, lockstep, … (neither always first after a switch)
// until each has played opt.Rounds rounds, rounded up to whole turns. A
// turn is timed from the release of its clients to the moment the last of
// them has read the turn's last observation, and the process's CPU time over
// it goes to its side. Round trips are measured by the clients as in Run:
// a client waits for its turn after reading an observation and before
// answering it, so no round trip spans a wait.
//
// The goroutines of each side (its server's and its clients') run under the
// pprof label side=lockstep or side=echo, so one CPU profile of the run
// tells them apart (go tool pprof -tagfocus side=echo).
func Turns(ctx context.Context, opt Options) (*Result, error) {
	opt = opt.withDefaults()
	if opt.Turns <= 0 {
		return nil, fmt.Errorf("turns: %d rounds a turn", opt.Turns)
	}
	done, err := opt.withDir()
	if err != nil {
		return nil, err
	}
	defer done()
	per := opt.Turns
	turns := (opt.Rounds + per - 1) / per
	opt.Rounds = turns * per
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var listeners []net.Listener
	var sides []*side
	served := make(chan error, 2)
	// fail ends the run: every client and server is stopped.
	fail := func(err error) (*Result, error) {
		cancel()
		for _, l := range listeners {
			l.Close()
		}
		for _, s := range sides {
			if s.fleet != nil {
				s.fleet.stop(nil)
			}
		}
		for range listeners {
			<-served
		}
		return nil, err
	}
	// start listens for a side's clients and starts its server there.
	start := func(s *side, serve func(ctx context.Context, l net.Listener) error) (string, error) {
		addr := "unix:" + filepath.Join(opt.Dir, s.name+".sock")
		l, err := ipc.Listen(ctx, addr)
		if err != nil {
			return "", err
		}
		listeners, sides = append(listeners, l), append(sides, s)
		s.do(ctx, func(ctx context.Context) {
			go func() { served <- serve(ctx, l) }()
		})
		return addr, nil
	}

	lock := newSide("lockstep", opt.Agents, per, turns+2)
	// Observation 0, the warm-up turn, the measured turns, and one more
	// decision point that only lets the episode end.
	srv, err := newServer(opt, per+opt.Rounds+1)
	if err != nil {
		return nil, err
	}
	addr, err := start(lock, func(ctx context.Context, l net.Listener) error {
		_, err := srv.Serve(ctx, l)
		return err
	})
	if err != nil {
		return fail(err)
	}
	if err := lock.connect(ctx, opt, addr, per, func(c *client) error {
		return c.send(map[string]any{"type": "hello", "protocol": ipc.ProtocolVersion, "role": "agent"})
	}); err != nil {
		return fail(err)
	}
	if err := lock.warm(ctx); err != nil {
		return fail(err)
	}
	frames := make([][]byte, opt.Agents)
	for i, c := range lock.fleet.clients {
		frames[i] = c.lastObs
	}

	echo := newSide("echo", opt.Agents, per, turns+1)
	if addr, err = start(echo, func(ctx context.Context, l net.Listener) error {
		return echoServe(ctx, l, frames, opt.Rounds+1)
	}); err != nil {
		return fail(err)
	}
	if err := echo.connect(ctx, opt, addr, 0, nil); err != nil {
		return fail(err)
	}
	if err := echo.fleet.await(ctx, echo.arrived); err != nil {
		return fail(err)
	}

	if opt.OnStart != nil {
		opt.OnStart()
	}
	for t := range turns {
		order := []*side{lock, echo}
		if t%2 == 1 {
			order = []*side{echo, lock}
		}
		for _, s := range order {
			if err := s.turn(ctx); err != nil {
				return fail(err)
			}
		}
	}
	if opt.OnStop != nil {
		opt.OnStop()
	}
	// The last decisions, which end both episodes.
	for _, s := range sides {
		s.open()
	}
	for _, s := range sides {
		if err := s.fleet.wait(); err != nil {
			return fail(err)
		}
	}
	for range listeners {
		if err := <-served; err != nil {
			return nil, fmt.Errorf("serve: %w", err)
		}
	}
	return Compare(lock.fleet.stats(lock.elapsed, lock.cpu), echo.fleet.stats(echo.elapsed, echo.cpu)), nil
}

// side is the lockstep's or the echo's half of a run of Turns.
type side struct {
	name  string
	fleet *fleet
	// Its clients wait at observations 0, per, 2·per, … (one gate each),
	// until the gate's channel in release closes; each tells arrived.
	per     int
	release []chan struct{}
	next    int // the gate to open next
	arrived chan struct{}
	elapsed time.Duration // of its turns
	cpu     time.Duration
}

// newSide is a side whose clients wait at observation 0 and every per
// observations after it, count gates in all.
func newSide(name string, agents, per, count int) *side {
	s := &side{name: name, per: per, arrived: make(chan struct{}, agents)}
	for range count {
		s.release = append(s.release, make(chan struct{}))
	}
	return s
}

// do runs fn with ctx and the goroutines it starts labelled with the side.
func (s *side) do(ctx context.Context, fn func(ctx context.Context)) {
	pprof.Do(ctx, pprof.Labels("side", s.name), fn)
}

// connect connects the side's clients; the first warm observations of each
// are not measured.
func (s *side) connect(ctx context.Context, opt Options, addr string, warm int, hello func(*client) error) error {
	var err error
	s.do(ctx, func(ctx context.Context) {
		s.fleet, err = connect(ctx, opt, addr, hello, func(c *client) {
			c.from, c.rounds, c.capture = warm, warm+opt.Rounds, warm
			c.gate = func(k int) error { return s.wait(ctx, k) }
		})
	})
	return err
}

// wait holds a client that has read observation k until its gate opens, if
// k is one.
func (s *side) wait(ctx context.Context, k int) error {
	i := k / s.per
	if k%s.per != 0 || i >= len(s.release) {
		return nil
	}
	s.arrived <- struct{}{}
	select {
	case <-s.release[i]:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// open opens the next gate.
func (s *side) open() {
	close(s.release[s.next])
	s.next++
}

// warm waits for every client at the first gate, and plays the turn after
// it unmeasured.
func (s *side) warm(ctx context.Context) error {
	if err := s.fleet.await(ctx, s.arrived); err != nil {
		return err
	}
	s.open()
	return s.fleet.await(ctx, s.arrived)
}

// turn plays one measured turn: from opening the gate every client waits
// at to every client's arrival at the next.
func (s *side) turn(ctx context.Context) error {
	cpu0, t0 := cpuTime(), time.Now()
	s.open()
	if err := s.fleet.await(ctx, s.arrived); err != nil {
		return err
	}
	s.elapsed += time.Since(t0)
	s.cpu += cpuTime() - cpu0
	return nil
}
