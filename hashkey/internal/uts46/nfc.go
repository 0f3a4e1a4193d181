package uts46

import (
	"slices"
	"unicode/utf8"
)

// This file implements Unicode Normalization Form C (UAX #15) over the
// package's own Unicode 17.0.0 tables, for labels made of valid and
// deviation code points: the only ones a label that passes validation can
// hold. Its cost is linear in the label, but for canonical reordering of
// long runs of combining marks, which is O(k log k) in the run.

// Hangul syllable constants (Unicode, section 3.12).
const (
	hangulSBase  = 0xAC00
	hangulLBase  = 0x1100
	hangulVBase  = 0x1161
	hangulTBase  = 0x11A7
	hangulLCount = 19
	hangulVCount = 21
	hangulTCount = 28
	hangulNCount = hangulVCount * hangulTCount
	hangulSCount = hangulLCount * hangulNCount
)

// isNFCQuick reports whether s is certainly in NFC; false means maybe.
func isNFCQuick(s []rune) bool {
	var last uint8
	for _, r := range s {
		if r < 0x300 {
			// Below U+0300 every code point has combining class 0 and
			// NFC_Quick_Check Yes.
			last = 0
			continue
		}
		p := lookup(r)
		c := p.ccc()
		if c != 0 && last > c || p.qc() != qcYes {
			return false
		}
		last = c
	}
	return true
}

// isNFC reports whether s is in NFC. scratch is reused when large enough.
func isNFC(s []rune, scratch []rune) bool {
	if isNFCQuick(s) {
		return true
	}
	return slices.Equal(nfc(scratch[:0], s), s)
}

// nfc appends the NFC form of s to dst, which must not overlap s.
func nfc(dst, s []rune) []rune {
	start := len(dst)
	for _, r := range s {
		switch {
		case r-hangulSBase >= 0 && r-hangulSBase < hangulSCount:
			i := r - hangulSBase
			dst = append(dst, hangulLBase+i/hangulNCount, hangulVBase+i%hangulNCount/hangulTCount)
			if t := i % hangulTCount; t != 0 {
				dst = append(dst, hangulTBase+t)
			}
		case r >= 0xC0 && lookup(r).hasDecomp():
			for _, c := range decomposition(r) {
				dst = append(dst, c)
			}
		default:
			dst = append(dst, r)
		}
	}
	reorder(dst[start:])
	return dst[:start+len(compose(dst[start:]))]
}

// reorder puts each run of non-starters in canonical order: a stable sort
// by combining class.
func reorder(s []rune) {
	for i := 0; i < len(s); {
		if ccc(s[i]) == 0 {
			i++
			continue
		}
		j := i + 1
		for j < len(s) && ccc(s[j]) != 0 {
			j++
		}
		sortByCCC(s[i:j])
		i = j
	}
}

func sortByCCC(run []rune) {
	if len(run) < 2 {
		return
	}
	if len(run) <= 16 {
		for i := 1; i < len(run); i++ {
			r, c := run[i], ccc(run[i])
			j := i
			for j > 0 && ccc(run[j-1]) > c {
				run[j] = run[j-1]
				j--
			}
			run[j] = r
		}
		return
	}
	// Long runs: sort keys holding class, position and code point, so
	// that an unstable sort is stable and each class is looked up once.
	keys := make([]uint64, len(run))
	for i, r := range run {
		keys[i] = uint64(ccc(r))<<53 | uint64(i)<<21 | uint64(r)
	}
	slices.Sort(keys)
	for i, k := range keys {
		run[i] = rune(k & (1<<21 - 1))
	}
}

func ccc(r rune) uint8 {
	if r < 0x300 {
		return 0
	}
	return lookup(r).ccc()
}

// compose applies canonical composition to the canonically ordered,
// decomposed s in place and returns the result.
func compose(s []rune) []rune {
	starter := -1  // index in the output of the last starter
	var last uint8 // combining class of the last code point written
	out := 0
	for _, r := range s {
		c := ccc(r)
		if starter >= 0 && (out-1 == starter || last != 0 && last < c) {
			if comp, ok := composePair(s[starter], r); ok {
				s[starter] = comp
				continue
			}
		}
		if c == 0 {
			starter = out
		}
		s[out] = r
		out++
		last = c
	}
	return s[:out]
}

// composePair returns the primary composite of a and b, if there is one.
func composePair(a, b rune) (rune, bool) {
	if l, v := a-hangulLBase, b-hangulVBase; l >= 0 && l < hangulLCount && v >= 0 && v < hangulVCount {
		return hangulSBase + (l*hangulVCount+v)*hangulTCount, true
	}
	if sv, t := a-hangulSBase, b-hangulTBase; sv >= 0 && sv < hangulSCount && sv%hangulTCount == 0 && t > 0 && t < hangulTCount {
		return a + t, true
	}
	if a > utf8.MaxRune || b > utf8.MaxRune {
		return 0, false
	}
	key := uint64(a)<<21 | uint64(b)
	lo, hi := 0, len(compKeys)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if compKeys[m] < key {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(compKeys) && compKeys[lo] == key {
		return rune(compValues[lo]), true
	}
	return 0, false
}
