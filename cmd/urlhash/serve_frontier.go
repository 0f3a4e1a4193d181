package main

import (
	"context"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/urlhash/urlhash/frontier"
	"github.com/urlhash/urlhash/frontier/urlfrontier"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/hashkey/urlhash"
	"github.com/urlhash/urlhash/query"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// frontierDir is the frontier's index beside the served one: a name the
// index keeps for the tools' own files (urlhash.*).
const frontierDir = "urlhash.frontier"

// servedFrontier is the crawl frontier of a served index: opened at start
// when --frontier is given or DIR/urlhash.frontier exists, else at the
// first /v1/frontier request.
type servedFrontier struct {
	dir     string
	profile hashkey.Profile
	logger  *slog.Logger
	level   *slog.LevelVar
	node    string

	mu sync.Mutex
	f  *frontier.Frontier
}

func newServedFrontier(db, recorded string, logger *slog.Logger, level *slog.LevelVar) (*servedFrontier, error) {
	var p hashkey.Profile = urlhash.Default
	if recorded != "" {
		var err error
		if p, err = query.ParseProfile(recorded); err != nil {
			return nil, err
		}
	}
	return &servedFrontier{dir: filepath.Join(db, frontierDir), profile: p, logger: logger, level: level}, nil
}

// get returns the frontier, opening it when open is set (else nil while
// it is not open).
func (s *servedFrontier) get(open bool) (*frontier.Frontier, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f != nil || !open {
		return s.f, nil
	}
	f, err := frontier.Open(s.dir, &frontier.Options{Profile: s.profile, Logger: s.logger, LogLevel: s.level, Node: s.node})
	if err != nil {
		return nil, fmt.Errorf("opening the frontier %s: %w", s.dir, err)
	}
	s.f = f
	return f, nil
}

// exists reports whether the frontier has been created before.
func (s *servedFrontier) exists() bool {
	_, err := os.Stat(s.dir)
	return err == nil
}

func (s *servedFrontier) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}

// serveGRPC serves the frontier's URLFrontier service on ln in plaintext
// (a token, when set, is required as "authorization: Bearer TOKEN"
// metadata) until stop is called; stop lets the calls in flight end for a
// few seconds, then cuts them.
func serveGRPC(ln net.Listener, f *frontier.Frontier, token string, logger *slog.Logger) (stop func()) {
	var opts []grpc.ServerOption
	if token != "" {
		check := func(ctx context.Context) error {
			md, _ := metadata.FromIncomingContext(ctx)
			for _, v := range md.Get("authorization") {
				if got, ok := strings.CutPrefix(v, "Bearer "); ok && subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1 {
					return nil
				}
			}
			return status.Error(codes.Unauthenticated, "missing or wrong bearer token")
		}
		opts = append(opts,
			grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
				if err := check(ctx); err != nil {
					return nil, err
				}
				return h(ctx, req)
			}),
			grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
				if err := check(ss.Context()); err != nil {
					return err
				}
				return h(srv, ss)
			}))
	}
	gs := grpc.NewServer(opts...)
	urlfrontier.Register(gs, f)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := gs.Serve(ln); err != nil {
			logger.Error("frontier: grpc", "error", err)
		}
	}()
	return func() {
		stopped := make(chan struct{})
		go func() { gs.GracefulStop(); close(stopped) }()
		select {
		case <-stopped:
		case <-time.After(5 * time.Second):
			gs.Stop()
		}
		<-done
	}
}
