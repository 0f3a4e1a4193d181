package main

import (
	"io"
	"sync"
)

// streamBatches calls fn with batches of the inputs in, args names (see
// inputFlags). On
// an interactive stdin (not a regular file) it hands over whatever has
// arrived, up to max inputs, without waiting for a batch to fill, so that a producer that writes one URL and
// waits for the answer (a crawler feeding dedupe) is answered at once,
// while a fast producer still gets large batches.
func streamBatches(e *env, in *inputFlags, args []string, max int, fn func([]input) error) error {
	if in.onlyArgs(args) {
		return readInputs(args, nil, false, false, max, fn)
	}
	// readInputs hands over the inputs of each read as soon as it
	// returns, so batches arrive without waiting for more input. From
	// files, where nobody waits, batches are filled: a full batch is
	// cheaper for the index to answer.
	fill := in.fromFiles(e, args)
	// Filled batches are large: one read ahead is enough to keep the
	// reader busy, more only holds memory.
	depth := 4
	if fill {
		depth = 1
	}
	batches := make(chan []input, depth)
	stop := make(chan struct{})
	var readErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(batches)
		err := in.read(e, args, max, func(b []input) error {
			select {
			case batches <- b:
				return nil
			case <-stop:
				return io.EOF
			}
		})
		if err != io.EOF {
			readErr = err
		}
	})
	// finish stops the reader. After an error the reader may be blocked in
	// a read; it is left to end with the process rather than waited for.
	finish := func(err error) error {
		close(stop)
		if err != nil {
			return err
		}
		wg.Wait()
		return readErr
	}
	for {
		var batch []input
		select {
		case <-e.ctx.Done():
			// The reader may be blocked in a read that only more input
			// ends: do not wait for it.
			close(stop)
			return e.ctx.Err()
		case next, ok := <-batches:
			if !ok {
				return finish(nil)
			}
			batch = next
			if fill && len(batch) < max {
				// Filled from many reads: one allocation, not a copy
				// per doubling (the last read may go past max).
				batch = append(make([]input, 0, max+2*len(batch)), batch...)
			}
		}
	drain:
		for len(batch) < max {
			if fill {
				more, ok := <-batches
				if !ok {
					break drain
				}
				batch = append(batch, more...)
				continue
			}
			select {
			case more, ok := <-batches:
				if !ok {
					break drain
				}
				batch = append(batch, more...)
			default:
				break drain
			}
		}
		if err := e.ctx.Err(); err != nil {
			return finish(err)
		}
		if err := fn(batch); err != nil {
			return finish(err)
		}
	}
}
