package hashkey

import "errors"

// appendWHATWG appends the URL Standard serialisation of raw, parsed with no
// base, to dst. TEMPORARY STUB: replaced by the full parser.
func appendWHATWG(dst []byte, raw string, dropFragment bool) ([]byte, error) {
	return dst, errors.New("not implemented")
}
