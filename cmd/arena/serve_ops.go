package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/server"
)

// opsFlags are arena serve's flags for operators: the admin endpoints, the
// drain on SIGTERM and the log format.
type opsFlags struct {
	adminListen  string
	drainTimeout time.Duration
	logFormat    string
}

func (o *opsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&o.adminListen, "admin-listen", "", "tcp:HOST:PORT or unix:PATH: serve /healthz, /readyz and Prometheus /metrics over HTTP (TCP binds to loopback when HOST is empty: tcp:0.0.0.0:PORT in a container)")
	fs.DurationVar(&o.drainTimeout, "drain-timeout", 30*time.Second, "on SIGTERM, how long the episode under way may take to end by itself before it is stopped (no new agents or episodes meanwhile)")
	fs.StringVar(&o.logFormat, "log-format", "text", "text or json: the format of the logs on standard error")
}

// logger builds the server's logger in the chosen format.
func (o *opsFlags) logger(stderr io.Writer) (*slog.Logger, error) {
	opts := &slog.HandlerOptions{Level: slog.LevelInfo}
	switch o.logFormat {
	case "text", "":
		return slog.New(slog.NewTextHandler(stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(stderr, opts)), nil
	}
	return nil, fmt.Errorf("serve: --log-format must be text or json, got %q", o.logFormat)
}

// serveAdmin starts the admin HTTP server when --admin-listen is set; the
// returned function stops it.
func (o *opsFlags) serveAdmin(ctx context.Context, srv *server.Server, logger *slog.Logger) (func(), error) {
	if o.adminListen == "" {
		return func() {}, nil
	}
	l, err := ipc.Listen(ctx, o.adminListen)
	if err != nil {
		return nil, fmt.Errorf("serve: --admin-listen: %w", err)
	}
	hs := &http.Server{Handler: srv.AdminHandler(), ReadHeaderTimeout: 5 * time.Second, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	go func() {
		if err := hs.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("admin server", "err", err)
		}
	}()
	logger.Info("admin listening", "addr", o.adminListen, "endpoints", "/healthz /readyz /metrics")
	return func() { hs.Close() }, nil
}

// drainOnSIGTERM drains srv when the process gets SIGTERM, and stops the
// episode under way (cancelling the returned context, as Ctrl-C does) when it
// has not ended after --drain-timeout. Call the returned function when done.
func (o *opsFlags) drainOnSIGTERM(ctx context.Context, srv *server.Server, logger *slog.Logger) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	sigterm := make(chan os.Signal, 1)
	signal.Notify(sigterm, syscall.SIGTERM)
	go func() {
		select {
		case <-sigterm:
		case <-ctx.Done():
			return
		}
		logger.Info("SIGTERM: draining", "drain_timeout", o.drainTimeout)
		srv.Drain()
		t := time.NewTimer(o.drainTimeout)
		defer t.Stop()
		select {
		case <-t.C:
			logger.Warn("drain timeout passed: stopping the episode", "drain_timeout", o.drainTimeout)
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(sigterm)
		cancel()
	}
}
