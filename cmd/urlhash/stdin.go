package main

import (
	"io"
	"sync"
)

// streamBatches calls fn with batches of records from args or stdin. On
// stdin it hands over whatever has arrived, up to max records, without
// waiting for a batch to fill, so that a producer that writes one URL and
// waits for the answer (a crawler feeding dedupe) is answered at once,
// while a fast producer still gets large batches.
func streamBatches(e *env, args []string, nul bool, max int, fn func([]record) error) error {
	if len(args) > 0 {
		return readRecords(args, nil, nul, max, fn)
	}
	records := make(chan record, 2*max)
	stop := make(chan struct{})
	var readErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(records)
		err := readRecords(nil, e.stdin, nul, 1, func(b []record) error {
			select {
			case records <- b[0]:
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
	batch := make([]record, 0, max)
	for {
		var r record
		select {
		case <-e.ctx.Done():
			// The reader may be blocked in a read that only more input
			// ends: do not wait for it.
			close(stop)
			return e.ctx.Err()
		case next, ok := <-records:
			if !ok {
				return finish(nil)
			}
			r = next
		}
		batch = append(batch[:0], r)
	drain:
		for len(batch) < max {
			select {
			case more, ok := <-records:
				if !ok {
					break drain
				}
				batch = append(batch, more)
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
