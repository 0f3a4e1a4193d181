package index

import "sync/atomic"

// probes counts the filter's answers to lookups (Get, Has, HasBatch, Match)
// and to the existence checks of Add, for Stats: a probe the filter
// answered "absent" cost no read; one it let through either found the key
// or was a false positive, which cost a read for nothing.
type probes struct {
	absent, found, falsePositive atomic.Int64
}

// prepass counts the filter's answers in a bare batch's lookup without
// locks (addHashes, visitHashes): absent it ruled out, found of those it
// let through (the others are counted by locked).
func (p *probes) prepass(absent, found int) {
	p.absent.Add(int64(absent))
	p.found.Add(int64(found))
}

// locked counts the filter's answers for a bare batch's candidates looked
// up again under their locks: asked it let through, found of those
// stored; the candidates it ruled out beyond the prepass's absent ones
// (counted there) are absent.
func (p *probes) locked(candidates, asked, found, prepassAbsent int) {
	p.found.Add(int64(found))
	p.falsePositive.Add(int64(asked - found))
	p.absent.Add(int64(max(candidates-asked-prepassAbsent, 0)))
}

// add counts n probes of which the filter let len(found) through; found
// says which of those Badger had.
func (p *probes) add(n int, found []bool) {
	if a := n - len(found); a > 0 {
		p.absent.Add(int64(a))
	}
	hits := 0
	for _, f := range found {
		if f {
			hits++
		}
	}
	if hits > 0 {
		p.found.Add(int64(hits))
	}
	if fp := len(found) - hits; fp > 0 {
		p.falsePositive.Add(int64(fp))
	}
}

// one counts one probe: the filter's answer (maybe) and, when it let the
// key through, whether Badger had it.
func (p *probes) one(maybe, found bool) {
	switch {
	case !maybe:
		p.absent.Add(1)
	case found:
		p.found.Add(1)
	default:
		p.falsePositive.Add(1)
	}
}
