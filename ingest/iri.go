package ingest

import (
	"fmt"
	"strings"
)

// iriRef is an IRI reference split into the five components of RFC 3986
// appendix B. A component's has* flag tells an empty component ("http:?")
// from an absent one ("http:"), which resolution keeps apart.
type iriRef struct {
	scheme, authority, path, query, fragment       string
	hasScheme, hasAuthority, hasQuery, hasFragment bool
}

// splitIRI splits s as the regular expression of RFC 3986 appendix B does:
// ^(([^:/?#]+):)?(//([^/?#]*))?([^?#]*)(\?([^#]*))?(#(.*))?
// A scheme must also follow the scheme rule (ALPHA *( ALPHA / DIGIT / "+" /
// "-" / "." )); otherwise the colon belongs to the path.
func splitIRI(s string) iriRef {
	var r iriRef
	if i := strings.IndexAny(s, ":/?#"); i > 0 && s[i] == ':' && isScheme(s[:i]) {
		r.scheme, r.hasScheme = s[:i], true
		s = s[i+1:]
	}
	if strings.HasPrefix(s, "//") {
		s = s[2:]
		i := strings.IndexAny(s, "/?#")
		if i < 0 {
			i = len(s)
		}
		r.authority, r.hasAuthority = s[:i], true
		s = s[i:]
	}
	if i := strings.IndexByte(s, '#'); i >= 0 {
		r.fragment, r.hasFragment = s[i+1:], true
		s = s[:i]
	}
	if i := strings.IndexByte(s, '?'); i >= 0 {
		r.query, r.hasQuery = s[i+1:], true
		s = s[:i]
	}
	r.path = s
	return r
}

// isScheme reports whether s follows RFC 3986's scheme rule.
func isScheme[T string | []byte](s T) bool {
	if len(s) == 0 || !isAlpha(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !isAlnum(c) && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

// isAbsoluteIRI reports whether s starts with a scheme: it needs no base.
func isAbsoluteIRI[T string | []byte](s T) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ':':
			return i > 0 && isScheme(s[:i])
		case '/', '?', '#':
			return false
		}
	}
	return false
}

// String recomposes the reference (RFC 3986 section 5.3).
func (r *iriRef) String() string {
	var b strings.Builder
	b.Grow(len(r.scheme) + len(r.authority) + len(r.path) + len(r.query) + len(r.fragment) + 6)
	if r.hasScheme {
		b.WriteString(r.scheme)
		b.WriteByte(':')
	}
	if r.hasAuthority {
		b.WriteString("//")
		b.WriteString(r.authority)
	}
	b.WriteString(r.path)
	if r.hasQuery {
		b.WriteByte('?')
		b.WriteString(r.query)
	}
	if r.hasFragment {
		b.WriteByte('#')
		b.WriteString(r.fragment)
	}
	return b.String()
}

// resolver resolves IRI references against a base IRI, as RDF 1.1 asks
// (RFC 3986 section 5.2, with no normalisation beyond remove_dot_segments).
// The zero resolver has no base: it refuses a relative reference.
type resolver struct {
	base    iriRef
	hasBase bool
	text    string // the base as given
}

// setBase makes s, an absolute IRI, the base.
func (rs *resolver) setBase(s string) error {
	if !isAbsoluteIRI(s) {
		return fmt.Errorf("%w: base IRI %s has no scheme", ErrRelativeIRI, quote(s))
	}
	rs.base, rs.hasBase, rs.text = splitIRI(s), true, s
	return nil
}

// resolve returns ref resolved against the base: the transform of RFC
// 3986 section 5.2.2 in its strict form. An absolute reference is returned
// as is when its path has no dot segment (the common case costs nothing).
func (rs *resolver) resolve(ref string) (string, error) {
	if isAbsoluteIRI(ref) {
		if !hasDotSegment(ref) {
			return ref, nil
		}
		r := splitIRI(ref)
		r.path = removeDotSegments(r.path)
		return r.String(), nil
	}
	if !rs.hasBase {
		return "", fmt.Errorf("%w <%s> and no base IRI to resolve it against", ErrRelativeIRI, ref)
	}
	return rs.resolveRef(splitIRI(ref)), nil
}

// resolveRef is RFC 3986 section 5.2.2 for a reference r with no scheme.
func (rs *resolver) resolveRef(r iriRef) string {
	b := &rs.base
	t := iriRef{scheme: b.scheme, hasScheme: true, fragment: r.fragment, hasFragment: r.hasFragment}
	switch {
	case r.hasAuthority:
		t.authority, t.hasAuthority = r.authority, true
		t.path = removeDotSegments(r.path)
		t.query, t.hasQuery = r.query, r.hasQuery
	case r.path == "":
		t.authority, t.hasAuthority = b.authority, b.hasAuthority
		t.path = b.path
		if r.hasQuery {
			t.query, t.hasQuery = r.query, true
		} else {
			t.query, t.hasQuery = b.query, b.hasQuery
		}
	default:
		t.authority, t.hasAuthority = b.authority, b.hasAuthority
		if r.path[0] == '/' {
			t.path = removeDotSegments(r.path)
		} else {
			t.path = removeDotSegments(mergePaths(b, r.path))
		}
		t.query, t.hasQuery = r.query, r.hasQuery
	}
	return t.String()
}

// mergePaths is RFC 3986 section 5.2.3.
func mergePaths(base *iriRef, ref string) string {
	if base.hasAuthority && base.path == "" {
		return "/" + ref
	}
	i := strings.LastIndexByte(base.path, '/')
	return base.path[:i+1] + ref
}

// hasDotSegment reports whether the path of the absolute IRI s may hold a
// "." or ".." segment, so that removeDotSegments may change it.
func hasDotSegment(s string) bool {
	if end := strings.IndexAny(s, "?#"); end >= 0 {
		s = s[:end]
	}
	for i := strings.IndexByte(s, '.'); i >= 0; {
		if s[i-1] == '/' || s[i-1] == ':' {
			return true
		}
		j := strings.IndexByte(s[i+1:], '.')
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}

// removeDotSegments is RFC 3986 section 5.2.4.
func removeDotSegments(in string) string {
	if !strings.Contains(in, ".") {
		return in
	}
	out := make([]byte, 0, len(in))
	for len(in) > 0 {
		switch {
		case strings.HasPrefix(in, "../"):
			in = in[3:]
		case strings.HasPrefix(in, "./"):
			in = in[2:]
		case strings.HasPrefix(in, "/./"):
			in = in[2:]
		case in == "/.":
			in = "/"
		case strings.HasPrefix(in, "/../"):
			in = in[3:]
			out = out[:lastSegment(out)]
		case in == "/..":
			in = "/"
			out = out[:lastSegment(out)]
		case in == "." || in == "..":
			in = ""
		default:
			// Move the first segment, with its leading '/' if any, to out.
			i := 0
			if in[0] == '/' {
				i = 1
			}
			j := strings.IndexByte(in[i:], '/')
			if j < 0 {
				j = len(in)
			} else {
				j += i
			}
			out = append(out, in[:j]...)
			in = in[j:]
		}
	}
	return string(out)
}

// lastSegment returns where the last segment of out, with its leading '/',
// starts (0 when out has no '/').
func lastSegment(out []byte) int {
	for i := len(out) - 1; i >= 0; i-- {
		if out[i] == '/' {
			return i
		}
	}
	return 0
}
