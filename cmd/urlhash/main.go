// Command urlhash computes portable URL identities and keeps them in an
// embedded index. Run "urlhash help" for the commands.
//
// URLHASH_CPUPROFILE=FILE writes a CPU profile of the whole command to FILE
// (for "go tool pprof"): the benchmarks measure whole processes, and this is
// how to see where such a process spends its time.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"
)

// interruptGrace is how long a command may take to finish after the first
// interrupt (closing its index cleanly) before the process exits anyway; a
// second interrupt exits at once. Whatever was acknowledged is durable
// either way. serve has no such limit: it drains its requests in flight
// (each bounded by its own timeouts), however long they take.
const interruptGrace = 5 * time.Second

func main() {
	ctx, stop := signalContext(os.Args[1:])
	stopProfile := startProfile(os.Getenv("URLHASH_CPUPROFILE"))
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stopProfile()
	stop()
	os.Exit(code)
}

// signalContext returns the context SIGINT and SIGTERM cancel for the
// command args name. After the first signal the default comes back, so
// that a second one kills; a command that does not drain (command.drains:
// all but serve) then has interruptGrace to finish before the process
// exits with status 2.
func signalContext(args []string) (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	var drains bool
	if len(args) > 0 {
		if c := findCommand(args[0]); c != nil {
			drains = c.drains
		}
	}
	go func() {
		<-ctx.Done()
		stop() // restore the default: a second signal kills
		if drains {
			return
		}
		time.Sleep(interruptGrace)
		os.Exit(exitError)
	}()
	return ctx, stop
}

// startProfile starts a CPU profile into path, when set, and returns the
// function that ends it.
func startProfile(path string) func() {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "urlhash: URLHASH_CPUPROFILE:", err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
