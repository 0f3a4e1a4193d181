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
	finish := func(err error) error {
		close(stop)
		wg.Wait()
		if err != nil {
			return err
		}
		return readErr
	}
	batch := make([]record, 0, max)
	for r := range records {
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
	return finish(nil)
}
