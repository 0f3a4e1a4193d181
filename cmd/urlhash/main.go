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
// either way.
const interruptGrace = 5 * time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // restore the default: a second signal kills
		time.Sleep(interruptGrace)
		os.Exit(exitError)
	}()
	stopProfile := startProfile(os.Getenv("URLHASH_CPUPROFILE"))
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stopProfile()
	stop()
	os.Exit(code)
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
