// Package dedupe is the exactly-once client of a seen-set: it adds
// batches of inputs (URLs, hashes) to an index and reports which were new,
// each new input once, also across crashes of the client and of a
// server. It is what "urlhash dedupe" runs, for Go programs: a crawler's
// frontier filter whose answers survive kill -9.
//
// # Basics
//
// Open a client of a query.Index with a Handler, which gets the answer to
// each batch in the order the batches were sent; Send (or SendURLs) adds
// a batch; Close waits for the answers:
//
//	ix, err := query.New(ctx, db, nil) // db: index.Open, backend.Open
//	c, err := dedupe.Open(ctx, ix, &dedupe.Options{Journal: dir + "/urlhash.dedupe"},
//		func(b *dedupe.Batch) error {
//			for i, in := range b.Inputs {
//				if b.New[i] {
//					frontier.Push(in.Text)
//				}
//			}
//			return nil // the batch is done: its journal is cleared
//		})
//	err = c.SendURLs(ctx, links)
//	err = c.Close()
//
// An input is new when the index did not hold its identity (or, with
// Options.RevisitAfter, held it since long enough); it is stored, and
// reported only once it is durable. Repeats within a batch, and across
// the batches in flight, are new at most once: the first input of an
// identity is the one reported.
//
// # Journals and crashes
//
// With a journal (Options.Journal, one file; Options.JournalDir, a
// directory of journals that the clients of one index share), a batch is
// written to its journal before it is sent, its answer is added once it
// arrives, and the journal is cleared once the Handler has taken it. A
// client killed in between leaves the batch there, and the next client
// to Open that journal finishes it first: a server (remote.DB) is sent
// the batch again with its Idempotency-Key and answers what it answered
// the first time, even while it is still applying the first request;
// another index reports those of the batch's inputs that it holds. Every
// input a client stored is reported at least once; exactly once while
// nothing crashes (after a crash, the inputs of the interrupted batches
// may be reported again, marked Batch.Recovered). Without a journal, a
// crash between the write and the Handler loses those answers.
//
// Journals are written without an fsync: they survive the death of the
// process, not of the machine. A finished client leaves no journal file
// behind.
//
// # Which index
//
// A journal names the identity of the index its batch was written to
// (index.DB.Identity, pgindex.DB.Identity, remote.DB.Identity), and a
// batch is finished only into that index: Open refuses a journal of
// another (an *IndexError, wrapping ErrOtherIndex) and leaves it, never
// finishing it into the wrong index nor dropping it. This matters when
// several indexes are served, one after the other, at one address: the
// journals of a server's clients are kept by its location. A batch sent
// to a server with its key also names the index (wire.HeaderIndex), so
// that a server serving another index since refuses it. Journals written
// by urlhash before identities, or for an index that has none, are
// finished as before.
//
// # Pipelining
//
// With a server, and a journal directory or none, two batches are in
// flight: the server stores one while the next is resolved and sent
// (BatchSize says the batch size measured best). One batch at a time
// otherwise: an index in this process answers a batch once it is synced.
package dedupe
