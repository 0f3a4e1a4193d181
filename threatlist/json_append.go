package threatlist

import (
	"encoding/base64"
	"slices"
	"strconv"
)

// AppendJSON appends r as encoding/json would marshal it (zero values
// left out), with responseType as a number when ints is set ($alt=json;
// enum-encoding=int). It writes the megabytes of base64 a large answer
// holds once, where encoding/json copies them three times.
func (r *DiffResponse) AppendJSON(dst []byte, ints bool) []byte {
	dst = append(dst, '{')
	comma := false
	field := func(name string) {
		if comma {
			dst = append(dst, ',')
		}
		comma = true
		dst = append(dst, '"')
		dst = append(dst, name...)
		dst = append(dst, '"', ':')
	}
	if r.ResponseType != "" {
		field("responseType")
		if ints {
			dst = strconv.AppendInt(dst, int64(slices.Index(responseTypes, string(r.ResponseType))), 10)
		} else {
			dst = strconv.AppendQuote(dst, string(r.ResponseType))
		}
	}
	if a := r.Additions; a != nil {
		field("additions")
		dst = append(dst, '{')
		inner := false
		if len(a.RawHashes) > 0 {
			dst = append(dst, `"rawHashes":[`...)
			for i, raw := range a.RawHashes {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = append(dst, '{')
				if raw.PrefixSize != 0 {
					dst = append(dst, `"prefixSize":`...)
					dst = strconv.AppendInt(dst, int64(raw.PrefixSize), 10)
				}
				if len(raw.RawHashes) > 0 {
					if raw.PrefixSize != 0 {
						dst = append(dst, ',')
					}
					dst = append(dst, `"rawHashes":`...)
					dst = appendBase64(dst, raw.RawHashes)
				}
				dst = append(dst, '}')
			}
			dst = append(dst, ']')
			inner = true
		}
		if a.RiceHashes != nil {
			if inner {
				dst = append(dst, ',')
			}
			dst = append(dst, `"riceHashes":`...)
			dst = a.RiceHashes.appendJSON(dst)
		}
		dst = append(dst, '}')
	}
	if rm := r.Removals; rm != nil {
		field("removals")
		dst = append(dst, '{')
		inner := false
		if rm.RawIndices != nil {
			dst = append(dst, `"rawIndices":{`...)
			if len(rm.RawIndices.Indices) > 0 {
				dst = append(dst, `"indices":[`...)
				for i, v := range rm.RawIndices.Indices {
					if i > 0 {
						dst = append(dst, ',')
					}
					dst = strconv.AppendInt(dst, int64(v), 10)
				}
				dst = append(dst, ']')
			}
			dst = append(dst, '}')
			inner = true
		}
		if rm.RiceIndices != nil {
			if inner {
				dst = append(dst, ',')
			}
			dst = append(dst, `"riceIndices":`...)
			dst = rm.RiceIndices.appendJSON(dst)
		}
		dst = append(dst, '}')
	}
	if len(r.NewVersionToken) > 0 {
		field("newVersionToken")
		dst = appendBase64(dst, r.NewVersionToken)
	}
	if r.Checksum != nil {
		field("checksum")
		dst = append(dst, '{')
		if len(r.Checksum.Sha256) > 0 {
			dst = append(dst, `"sha256":`...)
			dst = appendBase64(dst, r.Checksum.Sha256)
		}
		dst = append(dst, '}')
	}
	if r.RecommendedNextDiff != "" {
		field("recommendedNextDiff")
		dst = strconv.AppendQuote(dst, r.RecommendedNextDiff)
	}
	return append(dst, '}')
}

func (d *RiceDelta) appendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	comma := false
	sep := func() {
		if comma {
			dst = append(dst, ',')
		}
		comma = true
	}
	if d.FirstValue != 0 {
		sep()
		dst = append(dst, `"firstValue":"`...)
		dst = strconv.AppendUint(dst, uint64(d.FirstValue), 10)
		dst = append(dst, '"')
	}
	if d.RiceParameter != 0 {
		sep()
		dst = append(dst, `"riceParameter":`...)
		dst = strconv.AppendInt(dst, int64(d.RiceParameter), 10)
	}
	if d.EntryCount != 0 {
		sep()
		dst = append(dst, `"entryCount":`...)
		dst = strconv.AppendInt(dst, int64(d.EntryCount), 10)
	}
	if len(d.EncodedData) > 0 {
		sep()
		dst = append(dst, `"encodedData":`...)
		dst = appendBase64(dst, d.EncodedData)
	}
	return append(dst, '}')
}

func appendBase64(dst, b []byte) []byte {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}
