// Command urlhash computes portable URL identities and keeps them in an
// embedded index. Run "urlhash help" for the commands.
package main

import (
	"context"
	"os"
	"os/signal"
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
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
