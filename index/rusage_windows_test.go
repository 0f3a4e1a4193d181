package index

// maxRSS returns 0: Windows has no getrusage.
func maxRSS() int64 { return 0 }
