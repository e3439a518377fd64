package server

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/ipc"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// CodeDraining is the code of the notice a draining server sends every
// session: the episode under way is the last one.
const CodeDraining = "DRAINING"

// Metrics are a server's Prometheus metrics, on a registry of their own (one
// per server: nothing global), served by AdminHandler.
type Metrics struct {
	Registry     *prometheus.Registry
	ticks        prometheus.Counter
	tickDuration prometheus.Histogram
	tickLag      prometheus.Gauge
	sessions     *prometheus.GaugeVec
	slotsFree    prometheus.Gauge
	decisions    prometheus.Counter
	timeouts     prometheus.Counter
	errors       *prometheus.CounterVec
	bytesIn      prometheus.Counter
	bytesOut     prometheus.Counter
	episodes     *prometheus.CounterVec
	episode      prometheus.Gauge
	draining     prometheus.Gauge
}

// NewMetrics makes a server's metrics and their registry, with the Go
// runtime's and the process's collectors.
func NewMetrics() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		ticks:    prometheus.NewCounter(prometheus.CounterOpts{Name: "arena_ticks_total", Help: "Ticks played, over every episode."}),
		tickDuration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "arena_tick_duration_seconds",
			Help:    "Wall time of a tick: from the end of the previous one (after pacing) to the end of its step, waiting for decisions included.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10)}),
		tickLag: prometheus.NewGauge(prometheus.GaugeOpts{Name: "arena_tick_lag_seconds",
			Help: "Real time: how far the last tick ended behind its schedule (0 when on time or in lockstep)."}),
		sessions: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "arena_sessions",
			Help: "Connected sessions by role: agent, spectator, or pending (no hello yet)."}, []string{"role"}),
		slotsFree: prometheus.NewGauge(prometheus.GaugeOpts{Name: "arena_slots_free", Help: "Agent slots open to clients and not connected."}),
		decisions: prometheus.NewCounter(prometheus.CounterOpts{Name: "arena_decisions_total",
			Help: "Decisions applied, built-in bots' and timed-out idles included."}),
		timeouts: prometheus.NewCounter(prometheus.CounterOpts{Name: "arena_decision_timeouts_total",
			Help: "Lockstep decisions that did not arrive in time (the agent idled)."}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "arena_errors_total",
			Help: "Errors by source (protocol: sent to a session; tool: a decision's failed result) and code."}, []string{"source", "code"}),
		bytesIn:  prometheus.NewCounter(prometheus.CounterOpts{Name: "arena_bytes_in_total", Help: "Bytes read from sessions."}),
		bytesOut: prometheus.NewCounter(prometheus.CounterOpts{Name: "arena_bytes_out_total", Help: "Bytes written to sessions."}),
		episodes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "arena_episodes_total",
			Help: "Episodes finished, by end reason (completed, time_limit, stopped)."}, []string{"end_reason"}),
		episode:  prometheus.NewGauge(prometheus.GaugeOpts{Name: "arena_episode", Help: "The episode under way (1-based); 0 before the first starts."}),
		draining: prometheus.NewGauge(prometheus.GaugeOpts{Name: "arena_draining", Help: "1 once the server drains (no new agents, no new episode)."}),
	}
	m.Registry.MustRegister(m.ticks, m.tickDuration, m.tickLag, m.sessions, m.slotsFree, m.decisions, m.timeouts,
		m.errors, m.bytesIn, m.bytesOut, m.episodes, m.episode, m.draining,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// status is what the admin endpoints read from other goroutines; the world's
// goroutine publishes it.
type status struct {
	started   atomic.Bool
	slotsFree atomic.Int64
	draining  atomic.Bool
}

// drain is the state of a drain, shared between the goroutine that asks for
// it (Drain) and the world's.
type drain struct {
	once      sync.Once
	ch        chan struct{} // closed by Drain
	mu        sync.Mutex
	listeners []net.Listener
	told      bool // the world's goroutine has told the sessions
}

// Drain asks the server to drain, from any goroutine: it closes the
// listeners (no new connections), starts no other episode, and tells every
// session that the episode under way is the last. The episode then ends by
// itself; cancel Serve's context to stop it sooner (as --drain-timeout does).
// A server draining before its first episode starts stops at once.
func (s *Server) Drain() {
	s.drain.once.Do(func() {
		s.status.draining.Store(true)
		if s.opt.Metrics != nil {
			s.opt.Metrics.draining.Set(1)
		}
		s.drain.mu.Lock()
		for _, l := range s.drain.listeners {
			l.Close()
		}
		s.drain.mu.Unlock()
		close(s.drain.ch)
	})
}

// Draining reports whether Drain was called.
func (s *Server) Draining() bool { return s.status.draining.Load() }

// Ready reports whether the server accepts agents: not draining, and some
// slot open to clients is free. The reason says why not.
func (s *Server) Ready() (ok bool, reason string) {
	switch {
	case s.status.draining.Load():
		return false, "draining"
	case s.status.slotsFree.Load() == 0:
		return false, "no free agent slot"
	}
	return true, fmt.Sprintf("%d agent slots free", s.status.slotsFree.Load())
}

// addListeners remembers Serve's listeners, for Drain to close.
func (s *Server) addListeners(ls []net.Listener) {
	s.drain.mu.Lock()
	defer s.drain.mu.Unlock()
	s.drain.listeners = append(s.drain.listeners, ls...)
	if s.status.draining.Load() {
		for _, l := range ls {
			l.Close()
		}
	}
}

// noticeDrain, on the world's goroutine, tells every session once that the
// server drains.
func (s *Server) noticeDrain() {
	if s.drain.told || !s.status.draining.Load() {
		return
	}
	s.drain.told = true
	s.log.Info("draining: the episode under way is the last", "episode", s.episode, "tick", s.w.Tick())
	s.broadcast(ipc.Notice{Type: "notice", Code: CodeDraining,
		Message: "the server is shutting down: this episode is the last one; it ends by itself or when the server's drain timeout passes"})
}

// publish, on the world's goroutine, updates what the admin endpoints and
// the session metrics read.
func (s *Server) publish() {
	free := 0
	for _, sl := range s.order {
		if sl.bot == nil && sl.conn == nil {
			free++
		}
	}
	s.status.slotsFree.Store(int64(free))
	m := s.opt.Metrics
	if m == nil {
		return
	}
	m.slotsFree.Set(float64(free))
	var agents, spectators, pending int
	for _, sess := range s.sessions {
		switch {
		case sess.slot != nil:
			agents++
		case sess.spectator:
			spectators++
		default:
			pending++
		}
	}
	m.sessions.WithLabelValues("agent").Set(float64(agents))
	m.sessions.WithLabelValues("spectator").Set(float64(spectators))
	m.sessions.WithLabelValues("pending").Set(float64(pending))
}

// observeTick records a finished tick: its wall time since the previous
// one's end, its decisions and their failures.
func (s *Server) observeTick(rec *engine.TickRecord) {
	m := s.opt.Metrics
	if m == nil {
		return
	}
	now := time.Now()
	if !s.tickStart.IsZero() {
		m.tickDuration.Observe(now.Sub(s.tickStart).Seconds())
	}
	m.ticks.Inc()
	for _, d := range rec.Decisions {
		m.decisions.Inc()
		if d.TimedOut {
			m.timeouts.Inc()
		}
		if d.Result.ErrorCode != "" {
			m.errors.WithLabelValues("tool", d.Result.ErrorCode).Inc()
		}
	}
}

// countError counts a protocol error sent to a session.
func (s *Server) countError(code string) {
	if s.opt.Metrics != nil {
		s.opt.Metrics.errors.WithLabelValues("protocol", code).Inc()
	}
}

// countEpisode counts a finished episode.
func (s *Server) countEpisode(res *engine.Results) {
	if s.opt.Metrics != nil && res != nil {
		s.opt.Metrics.episodes.WithLabelValues(res.EndReason).Inc()
	}
}

// setLag records how late the last tick ended in real time.
func (s *Server) setLag(late time.Duration) {
	if s.opt.Metrics != nil {
		s.opt.Metrics.tickLag.Set(max(late, 0).Seconds())
	}
}

// countingConn counts a session's bytes into the metrics.
type countingConn struct {
	net.Conn
	m *Metrics
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.m.bytesIn.Add(float64(n))
	return n, err
}

func (c countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.m.bytesOut.Add(float64(n))
	return n, err
}

// counted wraps nc to count its bytes when the server has metrics.
func (s *Server) counted(nc net.Conn) net.Conn {
	if s.opt.Metrics == nil {
		return nc
	}
	return countingConn{Conn: nc, m: s.opt.Metrics}
}

// AdminHandler serves the operator's endpoints: /healthz (the process is
// alive), /readyz (200 while it accepts agents, 503 with the reason when
// not) and, when the server has Metrics, /metrics in Prometheus's format.
func (s *Server) AdminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		ok, reason := s.Ready()
		if !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		fmt.Fprintln(w, reason)
	})
	if m := s.opt.Metrics; m != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry}))
	}
	return mux
}

// ErrDrained is Serve's error when the server drained before its first
// episode started: nothing was played.
var ErrDrained = errors.New("drained before the first episode started")
