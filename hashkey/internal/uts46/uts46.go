package uts46

import (
	"slices"
	"unicode/utf8"
)

// MaxLabelLength is the longest internationalized label, in code points,
// that ToASCII accepts: a label that is not ASCII once mapped and longer
// than this once normalized, or an "xn--" label that decodes to more, is an
// error (ErrLabelTooLong). The check comes before normalization and
// Punycode, so it also bounds their work. UTS #46 sets no limit when
// VerifyDnsLength is false. The cap keeps every result decodable by common
// Punycode decoders, so ToASCII accepts its own output. ASCII labels are
// not capped: converting them costs nothing, and the URL Standard keeps an
// ASCII domain as it is.
const MaxLabelLength = 1024

// MaxDomainLength is the longest domain, in bytes, that ToASCII accepts
// (ErrDomainTooLong).
const MaxDomainLength = 1 << 20

// A Profile is a set of UTS #46 ToASCII options. Profiles are immutable
// and safe for concurrent use. Every profile uses CheckBidi=true,
// CheckJoiners=true, Transitional_Processing=false and
// IgnoreInvalidPunycode=false.
type Profile struct {
	name         string
	url          bool // the URL Standard's domain parser around ToASCII
	checkHyphens bool
	std3         bool
	verifyDNS    bool
}

// An Option configures a Profile made by New.
type Option func(*Profile)

// CheckHyphens sets UTS #46 CheckHyphens: with it, a label may not begin
// or end with '-' nor have "--" in its third and fourth positions; without
// it, a decoded "xn--" label may not itself begin with "xn--".
func CheckHyphens(on bool) Option { return func(p *Profile) { p.checkHyphens = on } }

// UseSTD3ASCIIRules sets UTS #46 UseSTD3ASCIIRules: with it, the ASCII
// code points of a label must be a-z, 0-9 or '-'.
func UseSTD3ASCIIRules(on bool) Option { return func(p *Profile) { p.std3 = on } }

// VerifyDNSLength sets UTS #46 VerifyDnsLength: with it, the result must
// be 1 to 253 bytes long and every label but a final empty one 1 to 63.
func VerifyDNSLength(on bool) Option { return func(p *Profile) { p.verifyDNS = on } }

// New returns a profile for UTS #46 ToASCII with the given options; with
// none it converts as Lookup does. New(CheckHyphens(true),
// UseSTD3ASCIIRules(true), VerifyDNSLength(true)) runs the UTS #46 ToASCII
// that the URL Standard's domain to ASCII runs with beStrict true.
func New(opts ...Option) *Profile {
	p := &Profile{name: "custom"}
	for _, o := range opts {
		o(p)
	}
	return p
}

var (
	// URL is the URL Standard's domain parser with beStrict false (the
	// "domain to ASCII" of a URL's host, https://url.spec.whatwg.org/
	// #concept-domain-to-ascii, as of whatwg/url#914, 2026): an ASCII
	// domain is lowercased whatever UTS #46 thinks of it; any other runs
	// UTS #46 ToASCII with CheckHyphens=false, CheckBidi=true,
	// CheckJoiners=true, UseSTD3ASCIIRules=false,
	// Transitional_Processing=false, VerifyDnsLength=false and
	// IgnoreInvalidPunycode=false. Either way an empty result
	// (ErrEmpty) or one holding a forbidden domain code point
	// (ErrForbidden) is an error.
	URL = &Profile{name: "url", url: true}

	// Lookup is plain UTS #46 ToASCII with the URL Standard's options
	// (CheckHyphens, UseSTD3ASCIIRules and VerifyDnsLength false), for
	// every domain, ASCII or not, and with no check of the result: it
	// converts "a_b.münchen.de" to "a_b.xn--mnchen-3ya.de" and
	// "ａ$ｂ.de" to "a$b.de", and rejects "xn--a.de". Callers filter the
	// result for the characters they allow.
	Lookup = &Profile{name: "lookup"}
)

// ToASCII converts domain as the URL Standard's domain parser does with
// beStrict false: URL.ToASCII(domain).
func ToASCII(domain string) (string, error) { return URL.ToASCII(domain) }

// String returns the profile's name: "url", "lookup" or "custom".
func (p *Profile) String() string { return p.name }

// ToASCII converts domain to its ASCII form under the profile. A failure is
// an *Error wrapping one of the sentinel errors.
func (p *Profile) ToASCII(domain string) (string, error) {
	if len(domain) <= MaxDomainLength && isASCII(domain) && p.asciiShortcut(domain) {
		out := asciiLower(domain)
		if err := p.checkURL(out); err != nil {
			return "", &Error{Domain: domain, Err: err}
		}
		return out, nil
	}
	b, err := p.AppendASCII(nil, domain)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// AppendASCII appends the ASCII form of domain under the profile to dst
// and returns the extended buffer; on failure it returns dst unchanged and
// an *Error.
func (p *Profile) AppendASCII(dst []byte, domain string) ([]byte, error) {
	if len(domain) > MaxDomainLength {
		return dst, &Error{Domain: domain, Err: ErrDomainTooLong}
	}
	n := len(dst)
	if isASCII(domain) && p.asciiShortcut(domain) {
		for i := 0; i < len(domain); i++ {
			c := domain[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
		}
	} else {
		var err error
		var label string
		dst, label, err = p.toASCII(dst, domain)
		if err != nil {
			return dst[:n], &Error{Domain: domain, Label: label, Err: err}
		}
	}
	if err := p.checkURL(string(dst[n:])); err != nil {
		return dst[:n], &Error{Domain: domain, Err: err}
	}
	return dst, nil
}

// asciiShortcut reports whether the ASCII domain's result is its ASCII
// lowercase form without further checks.
func (p *Profile) asciiShortcut(domain string) bool {
	if p.url {
		// The URL Standard: "If domain is an ASCII string, then set
		// result to domain, lowercased", whatever ToASCII says.
		return true
	}
	// Plain UTS #46: ASCII labels map to their lowercase form and are
	// valid; only "xn--" labels and the optional checks need more.
	return !p.checkHyphens && !p.std3 && !p.verifyDNS && !hasACELabel(domain)
}

// checkURL applies the URL Standard's checks on the result of ToASCII.
func (p *Profile) checkURL(out string) error {
	if !p.url {
		return nil
	}
	if out == "" {
		return ErrEmpty
	}
	for i := 0; i < len(out); i++ {
		if isForbiddenDomain(out[i]) {
			return ErrForbidden
		}
	}
	return nil
}

// isForbiddenDomain reports whether c is a forbidden domain code point of
// the URL Standard: a C0 control, space, '#', '%', '/', ':', '<', '>',
// '?', '@', '[', '\', ']', '^', '|' or DELETE.
func isForbiddenDomain(c byte) bool {
	switch c {
	case ' ', '#', '%', '/', ':', '<', '>', '?', '@', '[', '\\', ']', '^', '|', 0x7F:
		return true
	}
	return c < 0x20
}

// toASCII runs UTS #46 ToASCII (processing, then conversion) on domain,
// appending the result to dst. On failure it also returns the label at
// fault, as far as it was processed.
func (p *Profile) toASCII(dst []byte, domain string) ([]byte, string, error) {
	// Step 1, map. Each label that is not ASCII once mapped is capped
	// before normalization: NFC composes at most four code points into
	// one, so such a label of more than 4*MaxLabelLength mapped code
	// points is too long. ASCII labels are not capped (see
	// MaxLabelLength).
	mapped := make([]rune, 0, len(domain)+len(domain)/4)
	labelStart := 0
	labelNonASCII := false
	for i := 0; i < len(domain); {
		if c := domain[i]; c < 0x80 {
			i++
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			mapped = append(mapped, rune(c))
			if c == '.' {
				labelStart, labelNonASCII = len(mapped), false
			}
		} else {
			r, size := utf8.DecodeRuneInString(domain[i:])
			if r == utf8.RuneError && size == 1 {
				return dst, "", ErrInvalidUTF8
			}
			i += size
			switch lookup(r).status() {
			case statusValid, statusDeviation:
				mapped = append(mapped, r)
				labelNonASCII = true
			case statusIgnored:
			case statusMapped:
				for _, m := range mapping(r) {
					mapped = append(mapped, m)
					if m == '.' {
						labelStart, labelNonASCII = len(mapped), false
					} else if m >= 0x80 {
						labelNonASCII = true
					}
				}
			default:
				return dst, string(mapped[labelStart:]) + string(r), ErrDisallowed
			}
		}
		if labelNonASCII && len(mapped)-labelStart > 4*MaxLabelLength {
			return dst, "", ErrLabelTooLong
		}
	}

	// Steps 2 to 4: normalize, break into labels, convert and validate.
	// proc receives the labels, decoded, separated by '.'.
	proc := make([]rune, 0, len(mapped))
	var scratch []rune
	var ascii []byte
	rtl := false
	for start := 0; start <= len(mapped); {
		end := start
		for end < len(mapped) && mapped[end] != '.' {
			end++
		}
		label := mapped[start:end]
		if start > 0 {
			proc = append(proc, '.')
		}
		start = end + 1

		nonASCII := false
		for _, r := range label {
			if r >= 0x80 {
				nonASCII = true
				break
			}
		}
		if nonASCII && !isNFCQuick(label) {
			// NFC of the whole domain is NFC of each label: a full stop
			// is a starter that never composes.
			scratch = nfc(scratch[:0], label)
			label = scratch
		}
		if nonASCII && len(label) > MaxLabelLength {
			return dst, "", ErrLabelTooLong
		}
		if isACE(label) {
			// The decoder stops at MaxLabelLength code points, having
			// read at most a few digits for each: the ASCII form of a
			// label at the cap is longer than the cap.
			if nonASCII {
				return dst, string(label), ErrPunycode
			}
			ascii = ascii[:0]
			for _, r := range label[4:] {
				ascii = append(ascii, byte(r))
			}
			at := len(proc)
			var err error
			proc, err = decodePunycode(proc, string(ascii), MaxLabelLength)
			if err != nil {
				return dst, string(label), err
			}
			decoded := proc[at:]
			if !hasNonASCII(decoded) {
				// Also an empty decoding: UTS #46 4 step 4.1.3.
				return dst, string(label), ErrPunycode
			}
			if err := p.validate(decoded, true, &scratch); err != nil {
				return dst, string(decoded), err
			}
			rtl = rtl || hasRTL(decoded)
			continue
		}
		if err := p.validate(label, false, &scratch); err != nil {
			return dst, string(label), err
		}
		if nonASCII {
			rtl = rtl || hasRTL(label)
		}
		proc = append(proc, label...)
	}

	// CheckBidi: in a Bidi domain name every label obeys RFC 5893.
	if rtl {
		for start := 0; start <= len(proc); {
			end := start
			for end < len(proc) && proc[end] != '.' {
				end++
			}
			if label := proc[start:end]; !bidiRule(label) {
				return dst, string(label), ErrBidi
			}
			start = end + 1
		}
	}

	// Conversion: Punycode for the labels that are not ASCII.
	n := len(dst)
	for start := 0; start <= len(proc); {
		end := start
		for end < len(proc) && proc[end] != '.' {
			end++
		}
		label := proc[start:end]
		if start > 0 {
			dst = append(dst, '.')
		}
		start = end + 1
		if !hasNonASCII(label) {
			for _, r := range label {
				dst = append(dst, byte(r))
			}
			continue
		}
		var err error
		dst = append(dst, "xn--"...)
		if dst, err = encodePunycode(dst, label); err != nil {
			return dst[:n], string(label), err
		}
	}
	if p.verifyDNS && !dnsLengthOK(dst[n:]) {
		return dst[:n], "", ErrDNSLength
	}
	return dst, "", nil
}

// validate applies the UTS #46 validity criteria (section 4.1) to a
// non-empty label, but for CheckBidi, which needs the whole domain. ace
// tells that the label was decoded from Punycode; other labels are mapped
// and normalized already. scratch is a buffer validate may reuse.
func (p *Profile) validate(label []rune, ace bool, scratch *[]rune) error {
	if len(label) == 0 {
		return nil
	}
	if ace {
		// Criterion 1: NFC; step 1 already normalized the other labels.
		if !isNFCQuick(label) {
			*scratch = nfc((*scratch)[:0], label)
			if !slices.Equal(*scratch, label) {
				return ErrNotNFC
			}
		}
		// Criterion 4.
		if !p.checkHyphens && isACE(label) {
			return ErrACEPrefix
		}
	}
	// Criteria 2 and 3.
	if p.checkHyphens && (label[0] == '-' || label[len(label)-1] == '-' || len(label) >= 4 && label[2] == '-' && label[3] == '-') {
		return ErrHyphen
	}
	// Criterion 6. (Criterion 5, no full stop, holds by construction.)
	if label[0] >= 0x300 && lookup(label[0]).isMark() {
		return ErrLeadingMark
	}
	// Criterion 7, and CheckJoiners (criterion 8).
	joiners := false
	for _, r := range label {
		if r < 0x80 {
			if p.std3 && !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
				return ErrSTD3
			}
			continue
		}
		if !lookup(r).isUsable() {
			return ErrDisallowed
		}
		joiners = joiners || r == 0x200C || r == 0x200D
	}
	if joiners && !contextJ(label) {
		return ErrJoiner
	}
	return nil
}

// contextJ reports whether every U+200C ZERO WIDTH NON-JOINER and U+200D
// ZERO WIDTH JOINER in label satisfies its rule in RFC 5892 Appendix A.1
// and A.2. Each scan stops at the first code point that is not of joining
// type T, so the work is linear in the label.
func contextJ(label []rune) bool {
	for i, r := range label {
		if r != 0x200C && r != 0x200D {
			continue
		}
		if i > 0 && ccc(label[i-1]) == cccVirama {
			continue
		}
		if r == 0x200D {
			return false
		}
		// (Joining_Type:{L,D})(Joining_Type:T)*\u200C(Joining_Type:T)*(Joining_Type:{R,D})
		j := i - 1
		for j >= 0 && joinType(label[j]) == joinT {
			j--
		}
		if j < 0 || joinType(label[j]) != joinL && joinType(label[j]) != joinD {
			return false
		}
		k := i + 1
		for k < len(label) && joinType(label[k]) == joinT {
			k++
		}
		if k == len(label) || joinType(label[k]) != joinR && joinType(label[k]) != joinD {
			return false
		}
	}
	return true
}

func joinType(r rune) int {
	if r < 0x80 {
		return joinU
	}
	return lookup(r).join()
}

func bidiClass(r rune) int {
	if r < 0x80 {
		return asciiBidi[r]
	}
	return lookup(r).bidi()
}

// asciiBidi holds the Bidi_Class of the ASCII code points.
var asciiBidi = func() (t [0x80]int) {
	for r := range t {
		t[r] = lookup(rune(r)).bidi()
	}
	return t
}()

// hasRTL reports whether s holds a code point of Bidi_Class R, AL or AN,
// which makes the domain a Bidi domain name.
func hasRTL(s []rune) bool {
	for _, r := range s {
		if r >= 0x80 {
			switch lookup(r).bidi() {
			case bidiR, bidiAL, bidiAN:
				return true
			}
		}
	}
	return false
}

// bidiRule reports whether a label satisfies the six conditions of RFC
// 5893 section 2. An empty label does.
func bidiRule(label []rune) bool {
	if len(label) == 0 {
		return true
	}
	var rtl bool
	switch bidiClass(label[0]) { // 1
	case bidiL:
	case bidiR, bidiAL:
		rtl = true
	default:
		return false
	}
	hasEN, hasAN := false, false
	last := bidiOther // class of the last code point that is not NSM
	for _, r := range label {
		c := bidiClass(r)
		if rtl {
			switch c { // 2
			case bidiR, bidiAL, bidiAN, bidiEN, bidiES, bidiCS, bidiET, bidiON, bidiBN, bidiNSM:
			default:
				return false
			}
		} else {
			switch c { // 5
			case bidiL, bidiEN, bidiES, bidiCS, bidiET, bidiON, bidiBN, bidiNSM:
			default:
				return false
			}
		}
		hasEN = hasEN || c == bidiEN
		hasAN = hasAN || c == bidiAN
		if c != bidiNSM {
			last = c
		}
	}
	if rtl {
		if last != bidiR && last != bidiAL && last != bidiEN && last != bidiAN { // 3
			return false
		}
		return !(hasEN && hasAN) // 4
	}
	return last == bidiL || last == bidiEN // 6
}

// dnsLengthOK applies VerifyDnsLength to the ASCII result: 1 to 253
// bytes, excluding a final root dot, and labels of 1 to 63 bytes.
func dnsLengthOK(s []byte) bool {
	if len(s) > 0 && s[len(s)-1] == '.' {
		s = s[:len(s)-1]
	}
	if len(s) < 1 || len(s) > 253 {
		return false
	}
	n := 0
	for _, c := range s {
		if c == '.' {
			if n < 1 || n > 63 {
				return false
			}
			n = 0
			continue
		}
		n++
	}
	return n >= 1 && n <= 63
}

func isACE(label []rune) bool {
	return len(label) >= 4 && label[0] == 'x' && label[1] == 'n' && label[2] == '-' && label[3] == '-'
}

func hasNonASCII(s []rune) bool {
	for _, r := range s {
		if r >= 0x80 {
			return true
		}
	}
	return false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// hasACELabel reports whether a label of the ASCII s starts with "xn--"
// in any case.
func hasACELabel(s string) bool {
	for i := 0; i+4 <= len(s); i++ {
		if (i == 0 || s[i-1] == '.') && s[i]|0x20 == 'x' && s[i+1]|0x20 == 'n' && s[i+2] == '-' && s[i+3] == '-' {
			return true
		}
	}
	return false
}

// asciiLower returns s with A-Z lowered, without allocating when there
// are none.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; 'A' <= c && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
