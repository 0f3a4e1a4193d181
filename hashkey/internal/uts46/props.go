package uts46

import "unicode/utf8"

// Code point statuses of the IDNA Mapping Table (keep in sync with gen.go).
const (
	statusDisallowed = iota
	statusValid
	statusMapped
	statusDeviation
	statusIgnored
)

// Bidi classes (keep in sync with gen.go bidiNames); bidiOther is every
// class that RFC 5893 does not name.
const (
	bidiOther = iota
	bidiL
	bidiR
	bidiAL
	bidiAN
	bidiEN
	bidiES
	bidiCS
	bidiET
	bidiON
	bidiBN
	bidiNSM
)

// Joining types (keep in sync with gen.go joinNames).
const (
	joinU = iota
	joinL
	joinR
	joinD
	joinT
	joinC
)

// NFC_Quick_Check values.
const (
	qcYes = iota
	qcNo
	qcMaybe
)

// cccVirama is the canonical combining class of viramas (RFC 5892 A.1).
const cccVirama = 9

// props holds the properties of one code point, packed:
//
//	bits  0..2   IDNA status
//	bits  3..10  Canonical_Combining_Class
//	bits 11..14  Bidi_Class
//	bits 15..17  Joining_Type
//	bit  18      General_Category is Mark
//	bits 19..20  NFC_Quick_Check
//	bit  21      has a canonical decomposition (Hangul syllables aside)
//
// Only valid and deviation code points carry more than a status: the
// other ones fail validation wherever they appear, so their other
// properties never matter.
type props uint32

func lookup(r rune) props {
	if uint32(r) > utf8.MaxRune {
		return 0
	}
	b := int(propsIndex[r>>propsShift]) << propsShift
	return props(propsValues[propsBlocks[b|int(r)&(1<<propsShift-1)]])
}

func (p props) status() int     { return int(p & 7) }
func (p props) ccc() uint8      { return uint8(p >> 3) }
func (p props) bidi() int       { return int(p>>11) & 15 }
func (p props) join() int       { return int(p>>15) & 7 }
func (p props) isMark() bool    { return p&(1<<18) != 0 }
func (p props) qc() int         { return int(p>>19) & 3 }
func (p props) hasDecomp() bool { return p&(1<<21) != 0 }

// isUsable reports whether the code point may appear in a valid label.
func (p props) isUsable() bool {
	s := p.status()
	return s == statusValid || s == statusDeviation
}

// search returns the index of r in keys, or -1.
func search(keys []uint32, r rune) int {
	lo, hi := 0, len(keys)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if keys[m] < uint32(r) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(keys) && keys[lo] == uint32(r) {
		return lo
	}
	return -1
}

// mapping returns the mapping of a code point of status mapped.
func mapping(r rune) string {
	i := search(mapKeys[:], r)
	if i < 0 {
		panic("uts46: no mapping for a mapped code point") // tables are inconsistent
	}
	return mapData[mapOffsets[i]:mapOffsets[i+1]]
}

// decomposition returns the full canonical decomposition of a code point
// whose props say it has one.
func decomposition(r rune) string {
	i := search(decompKeys[:], r)
	if i < 0 {
		panic("uts46: no decomposition for a decomposable code point")
	}
	return decompData[decompOffsets[i]:decompOffsets[i+1]]
}
